package io.pegaflow.core.engine;

import io.pegaflow.core.cache.BlockCache;
import io.pegaflow.core.cache.EvictedBlocks;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.core.metrics.EngineMetrics;
import io.pegaflow.core.tier.ReclaimingAllocator;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Allocation with reclaim: try the pool; when it has no room, evict batches of the coldest blocks from the RAM index
 * until the largest free region fits, retrying; give up when eviction frees nothing.
 *
 * <p>Eviction skips blocks another holder references (see {@link BlockCache}), so a request larger than what
 * unreferenced blocks can free ends after one pass over the index instead of emptying it for nothing.
 *
 * <p>Before giving up it waits once for the sealing worker to drain: saved blocks still queued for sealing hold pool
 * memory but are not in the index yet, so they cannot be evicted. Without this wait a fast run of Saves could fail
 * with "pool exhausted" only because the sealer had not caught up, which the cold failure path can afford to avoid.
 *
 * <p>With a headroom ({@code pega.pool.headroom}), {@link #keepHeadroom} evicts ahead of demand: after each sealed
 * Save the coldest blocks go until that many bytes are free, on the sealing thread, so the next Saves find room
 * without evicting on their own request thread (measured on a full pool: 1.2–2.4 ms of a 36-layer, 1024-block Save).
 *
 * <p>The engine's {@link ReclaimingAllocator}: Save uses it, and so does every backing tier fetch. It is built from
 * the engine's parts (pool, index, announcements, the sealer's barrier), never from the facade.
 */
final class PoolReclaimer implements ReclaimingAllocator {
    private final PinnedMemoryPool pool;
    private final BlockCache cache;
    private final EngineMetrics metrics;
    private final int batch;
    private final long headroomBytes;
    private final IndexAnnouncements announcements;
    private final SealBarrier seals;

    /** Waits, with a deadline, until every Save queued so far is sealed into the index. Never throws. */
    interface SealBarrier {
        void awaitPendingSeals();
    }

    PoolReclaimer(
            PinnedMemoryPool pool,
            BlockCache cache,
            EngineMetrics metrics,
            int batch,
            long headroomBytes,
            IndexAnnouncements announcements,
            SealBarrier seals) {
        this.pool = pool;
        this.cache = cache;
        this.metrics = metrics;
        this.batch = batch;
        this.headroomBytes = headroomBytes;
        this.announcements = announcements;
        this.seals = seals;
    }

    // Failed reclaiming allocations since the last one that succeeded: positive means the pool is pinned (nothing
    // evictable could make room), which health reports until an allocation succeeds again.
    private final AtomicLong failuresSinceSuccess = new AtomicLong();

    /** Reclaiming allocations that failed since the last that succeeded; 0 when the last one succeeded. */
    long failuresSinceSuccess() {
        return failuresSinceSuccess.get();
    }

    /** Returns an allocation or null when the pool stays full after reclaim. */
    @Override
    public @Nullable PinnedAllocation allocate(long bytes) {
        PinnedAllocation allocation = allocateReclaiming(bytes);
        if (allocation == null) {
            failuresSinceSuccess.incrementAndGet();
        } else if (failuresSinceSuccess.get() != 0) {
            failuresSinceSuccess.set(0);
        }
        return allocation;
    }

    private @Nullable PinnedAllocation allocateReclaiming(long bytes) {
        boolean awaitedSeals = false;
        for (; ; ) {
            PinnedAllocation allocation = pool.allocate(bytes);
            if (allocation != null) {
                return allocation;
            }
            boolean freedAny = false;
            while (pool.largestFreeBytes() < bytes) {
                EvictedBlocks evicted = cache.evictColdest(batch);
                if (evicted.count() == 0) {
                    break;
                }
                drop(evicted);
                freedAny = true;
            }
            if (!freedAny) {
                allocation = pool.allocate(bytes);
                if (allocation == null && !awaitedSeals) {
                    awaitedSeals = true;
                    seals.awaitPendingSeals();
                    continue;
                }
                if (allocation == null) {
                    metrics.increment(EngineCounter.POOL_ALLOC_FAILURES);
                }
                return allocation;
            }
        }
    }

    /**
     * Evicts the coldest unreferenced blocks until the pool has {@code headroomBytes} free or nothing more can go (what
     * is left is leased, loading or locked). Free bytes count every region, so a fragmented pool may still make a
     * large allocation reclaim on its own; the headroom takes the common case off the request path. Never throws
     * for want of room; a no-op without a headroom.
     */
    void keepHeadroom() {
        while (headroomBytes > 0 && pool.capacityBytes() - pool.usedBytes() < headroomBytes) {
            EvictedBlocks evicted = cache.evictColdest(batch);
            if (evicted.count() == 0) {
                return;
            }
            metrics.add(EngineCounter.CACHE_EVICTIONS_AHEAD, evicted.count());
            drop(evicted);
        }
    }

    /** Accounts for, announces and releases one evicted batch; returns the pinned bytes freed by it. */
    long drop(EvictedBlocks evicted) {
        long usedBefore = pool.usedBytes();
        announcements.evicted(evicted.keys());
        metrics.add(EngineCounter.CACHE_EVICTIONS, evicted.count());
        metrics.add(EngineCounter.CACHE_EVICTIONS_STILL_REFERENCED, evicted.stillReferenced());
        evicted.releaseAll();
        long reclaimed = Math.max(0, usedBefore - pool.usedBytes());
        metrics.add(EngineCounter.CACHE_EVICTION_RECLAIMED_BYTES, reclaimed);
        return reclaimed;
    }
}
