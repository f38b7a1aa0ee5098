/**
 * Pinned host memory for KV blocks.
 *
 * <p>Public API: {@link io.pegaflow.core.memory.PinnedMemoryPool} (create from a
 * {@link io.pegaflow.core.memory.PoolConfig}, allocate, report, close), {@link io.pegaflow.core.memory.PinnedAllocation}
 * (a reference-counted slice), {@link io.pegaflow.kernel.memory.MemoryRegionInfo} (a shard's mapping for RDMA or CUDA
 * registration), and the helpers {@link io.pegaflow.core.memory.HugePages} and
 * {@link io.pegaflow.core.memory.CpuTopology}.
 *
 * <p>Everything else is package-private: {@code OffsetAllocator} and {@code SmallFloat} (the size-class allocator),
 * {@code UnitScaledAllocator} (bytes to units), {@code PoolShard}, {@code BackingRegion} and {@code PreToucher}. The
 * design is described in {@code docs/design/memory-pool.md}.
 */
@NullMarked
package io.pegaflow.core.memory;

import org.jspecify.annotations.NullMarked;
