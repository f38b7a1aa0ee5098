/**
 * What a pinned memory region looks like to the layers that register it elsewhere (RDMA, CUDA, the push):
 * {@link io.pegaflow.kernel.memory.MemoryRegionInfo} (one shard's mapped address and length) and
 * {@link io.pegaflow.kernel.memory.ShardMemory} (the shards of a pool). Interfaces and records only, so the transfer
 * engine can register a pool without depending on the engine that owns it.
 */
@NullMarked
package io.pegaflow.kernel.memory;

import org.jspecify.annotations.NullMarked;
