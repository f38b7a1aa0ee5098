package io.pegaflow.core.memory;

import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.kernel.memory.ShardMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Host memory for KV blocks: one mapping per shard (anonymous, or allocated from a {@link ShardMemory}), outside the
 * Java heap, each managed by an {@link OffsetAllocator} under its own lock (see {@code docs/design/memory-pool.md}).
 *
 * <p>{@link #allocate} starts at a round-robin shard and tries each shard once, so concurrent savers spread over the
 * shard locks. It returns null when nothing fits; the engine then evicts and retries. Allocations are reference counted
 * ({@link PinnedAllocation}) and return to their shard on their last release.
 *
 * <p>Lifetime: the pool must outlive its allocations. {@link #close()} unmaps at once when none is outstanding.
 * Otherwise it logs an error and leaves every region mapped, so late readers and writers never touch unmapped memory;
 * the regions are unmapped when the last outstanding allocation is released. {@link #allocate} after close throws.
 *
 * <p>Thread-safe. Counters ({@link #usedBytes()}, {@link #outstandingAllocations()}) are atomics updated outside the
 * shard locks, so they are exact when the pool is quiescent and may lag by in-flight calls otherwise.
 */
public final class PinnedMemoryPool implements PoolView, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PinnedMemoryPool.class);

    private final PoolConfig config;
    private final PoolShard[] shards;
    private final List<MemoryRegionInfo> regions;
    private final long unitBytes;
    private final long capacityBytes;
    private final long readyNanos;

    private final AtomicInteger cursor = new AtomicInteger();
    private final AtomicLong usedBytes = new AtomicLong();
    /** Live allocations plus calls to allocate in progress; see {@link #allocate}. */
    private final AtomicInteger outstanding = new AtomicInteger();

    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicBoolean unmapped = new AtomicBoolean();

    private PinnedMemoryPool(PoolConfig config, List<BackingRegion> backing, long unitBytes, long readyNanos) {
        this.config = config;
        this.unitBytes = unitBytes;
        this.readyNanos = readyNanos;
        this.shards = new PoolShard[backing.size()];
        List<MemoryRegionInfo> infos = new ArrayList<>(backing.size());
        long capacity = 0;
        for (int i = 0; i < shards.length; i++) {
            BackingRegion region = backing.get(i);
            shards[i] = new PoolShard(this, i, region, unitBytes);
            capacity += shards[i].capacityBytes();
            infos.add(new MemoryRegionInfo(region.address(), region.lengthBytes()));
        }
        this.capacityBytes = capacity;
        this.regions = List.copyOf(infos);
    }

    /**
     * Maps, binds and pre-touches every shard, one after another (each shard's pre-touch is parallel). Blocks for
     * roughly a second per few GiB.
     *
     * @throws IllegalArgumentException when a shard would hold less than one allocator unit
     * @throws io.pegaflow.sys.NativeException when a mapping fails; shards mapped so far are unmapped again
     */
    public static PinnedMemoryPool create(PoolConfig config) {
        return create(config, null);
    }

    /**
     * As {@link #create(PoolConfig)}, with every shard allocated from {@code memory} instead of mapped by the pool
     * ({@link PoolConfig#hugePages()} is then the memory's business); null maps them anonymously. {@code memory} must
     * outlive the pool.
     */
    public static PinnedMemoryPool create(PoolConfig config, @Nullable ShardMemory memory) {
        long startNanos = NanoClock.SYSTEM.nanoTime();
        long shardBytes = config.shardCapacityBytes();
        long unitBytes = UnitScaledAllocator.unitBytesFor(Math.max(1, shardBytes), config.hintValueSizeBytes());
        if (shardBytes < unitBytes) {
            throw new IllegalArgumentException("capacityBytes " + config.capacityBytes() + " over " + config.shards()
                    + " shards leaves " + shardBytes + " bytes per shard, below one unit of " + unitBytes + " bytes");
        }
        List<BackingRegion> backing = new ArrayList<>(config.shards());
        try {
            for (int i = 0; i < config.shards(); i++) {
                backing.add(BackingRegion.map(shardBytes, config, "pool-shard-" + i, memory));
            }
        } catch (RuntimeException | Error e) {
            backing.forEach(BackingRegion::unmap);
            throw e;
        }
        // Huge-page rounding may enlarge the mapping; the unit follows the size actually mapped.
        long mappedBytes = backing.get(0).lengthBytes();
        long finalUnitBytes = UnitScaledAllocator.unitBytesFor(mappedBytes, config.hintValueSizeBytes());
        PinnedMemoryPool pool =
                new PinnedMemoryPool(config, backing, finalUnitBytes, NanoClock.SYSTEM.nanoTime() - startNanos);
        log.info(
                "Pinned pool ready: shards={}, mappedPerShard={} B, pages={}, unit={} B, allocatable={} B, numaNode={},"
                        + " took {} ms",
                config.shards(),
                mappedBytes,
                memory == null ? backing.get(0).pageKind() : memory.describe(),
                finalUnitBytes,
                pool.capacityBytes,
                config.numaNode(),
                pool.readyNanos / 1_000_000);
        return pool;
    }

    /**
     * Allocates {@code bytes} rounded up to {@link #unitBytes()}, at a 512-byte aligned address.
     *
     * @return the allocation with a reference count of 1, owned by the caller; null when no shard can serve it now
     *     (including requests larger than a shard)
     * @throws IllegalArgumentException when {@code bytes <= 0}
     * @throws IllegalStateException when the pool is closed
     */
    public @Nullable PinnedAllocation allocate(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes must be > 0, was " + bytes);
        }
        // Count the call before checking closed: close() sets closed before reading the count, so either close sees
        // this call and defers the unmap, or this call sees closed and backs out.
        outstanding.incrementAndGet();
        boolean allocated = false;
        try {
            if (closed.get()) {
                throw new IllegalStateException("pinned memory pool is closed");
            }
            if (UnitScaledAllocator.ceilDiv(bytes, unitBytes) > shards[0].capacityBytes() / unitBytes) {
                return null;
            }
            int start = Math.floorMod(cursor.getAndIncrement(), shards.length);
            for (int i = 0; i < shards.length; i++) {
                PinnedAllocation allocation = shards[(start + i) % shards.length].tryAllocate(bytes);
                if (allocation != null) {
                    usedBytes.addAndGet(allocation.sizeBytes());
                    allocated = true;
                    return allocation;
                }
            }
            return null;
        } finally {
            if (!allocated) {
                releaseOutstanding();
            }
        }
    }

    /** Accounting for a freed allocation; called by its shard after the allocator took it back. */
    void onFreed(long sizeBytes) {
        usedBytes.addAndGet(-sizeBytes);
        releaseOutstanding();
    }

    private void releaseOutstanding() {
        if (outstanding.decrementAndGet() == 0 && closed.get()) {
            unmapAll();
        }
    }

    /** The allocator granule: 512 bytes unless the hint or a huge shard forces a larger multiple of 512. */
    public long unitBytes() {
        return unitBytes;
    }

    /** Allocatable bytes over all shards: each shard's mapping rounded down to whole units. */
    @Override
    public long capacityBytes() {
        return capacityBytes;
    }

    /** The largest single allocation the pool could ever serve (one shard's allocatable bytes), free or not. */
    public long maxAllocationBytes() {
        return shards[0].capacityBytes();
    }

    /** Bytes held by live allocations, at their rounded sizes. */
    @Override
    public long usedBytes() {
        return usedBytes.get();
    }

    /**
     * The largest request that surely succeeds now, up to allocator bin rounding: the maximum over shards of the
     * lower bound of each shard's highest non-empty size class. A larger request may still succeed.
     */
    @Override
    public long largestFreeBytes() {
        long largest = 0;
        for (PoolShard shard : shards) {
            largest = Math.max(largest, shard.largestFreeBytes());
        }
        return largest;
    }

    /** Allocations not yet fully released (plus allocate calls in flight); 0 when every holder has released. */
    @Override
    public int outstandingAllocations() {
        return outstanding.get();
    }

    /** Nanoseconds {@link #create} took to map and pre-touch every shard. */
    @Override
    public long readyNanos() {
        return readyNanos;
    }

    /** Each shard's whole mapping, in shard order, for one-time RDMA or CUDA registration. */
    @Override
    public List<MemoryRegionInfo> regions() {
        return regions;
    }

    /** The configuration this pool was built from. */
    @Override
    public PoolConfig config() {
        return config;
    }

    /**
     * Closes the pool; later calls do nothing. Unmaps every region unless allocations are outstanding, in which case it
     * logs an error and the regions stay mapped until the last of them is released.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        int live = outstanding.get();
        if (live > 0) {
            log.error(
                    "Pinned pool closed with {} allocations outstanding ({} bytes used); leaving {} regions mapped"
                            + " until they are released",
                    live,
                    usedBytes.get(),
                    shards.length);
            return;
        }
        unmapAll();
    }

    private void unmapAll() {
        if (unmapped.compareAndSet(false, true)) {
            for (PoolShard shard : shards) {
                shard.region().unmap();
            }
        }
    }

    boolean isClosed() {
        return closed.get();
    }

    boolean isUnmapped() {
        return unmapped.get();
    }

    PoolShard shard(int index) {
        return shards[index];
    }

    int shardCount() {
        return shards.length;
    }
}
