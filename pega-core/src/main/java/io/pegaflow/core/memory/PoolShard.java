package io.pegaflow.core.memory;

import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * One mapped region and the allocator over it. The lock covers only allocator calls; address arithmetic, accounting
 * and the allocation object are done outside it.
 *
 * <p>Thread-safe.
 */
final class PoolShard {
    private final PinnedMemoryPool pool;
    private final int index;
    private final BackingRegion region;
    private final ReentrantLock lock = new ReentrantLock();
    private final UnitScaledAllocator allocator;

    PoolShard(PinnedMemoryPool pool, int index, BackingRegion region, long unitBytes) {
        this.pool = pool;
        this.index = index;
        this.region = region;
        long units = region.lengthBytes() / unitBytes;
        this.allocator =
                new UnitScaledAllocator(region.lengthBytes(), unitBytes, UnitScaledAllocator.maxAllocsFor(units));
    }

    /** An allocation of {@code bytes} rounded up to units, or null when this shard cannot serve it now. */
    @Nullable
    PinnedAllocation tryAllocate(long bytes) {
        int handle;
        long offsetBytes;
        long sizeBytes;
        lock.lock();
        try {
            handle = allocator.allocate(bytes);
            if (handle == OffsetAllocator.NO_SPACE) {
                return null;
            }
            offsetBytes = allocator.offsetBytes(handle);
            sizeBytes = allocator.sizeBytes(handle);
        } finally {
            lock.unlock();
        }
        return new PinnedAllocation(this, handle, region.address() + offsetBytes, sizeBytes);
    }

    /** Called once per allocation, by its last release. */
    void free(int handle, long sizeBytes) {
        lock.lock();
        try {
            allocator.free(handle);
        } finally {
            lock.unlock();
        }
        pool.onFreed(sizeBytes);
    }

    long largestFreeBytes() {
        lock.lock();
        try {
            return allocator.largestFreeBytes();
        } finally {
            lock.unlock();
        }
    }

    long freeBytes() {
        lock.lock();
        try {
            return allocator.freeBytes();
        } finally {
            lock.unlock();
        }
    }

    int nodesInUse() {
        lock.lock();
        try {
            return allocator.units().nodesInUse();
        } finally {
            lock.unlock();
        }
    }

    long capacityBytes() {
        return allocator.capacityBytes();
    }

    int index() {
        return index;
    }

    BackingRegion region() {
        return region;
    }

    @Override
    public String toString() {
        return "shard " + index;
    }
}
