package io.pegaflow.core.engine;

import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.memory.PinnedAllocation;

/**
 * Pool memory for bytes that pass through this node without entering its cache: the P/D push's staging on the prefill
 * and the decode side. It takes the Save's path through the pool, so a node whose cache filled the pool (the steady
 * state of any cache after a few minutes of traffic) still has room for a push:
 *
 * <ol>
 *   <li>the request's size is checked against {@code pega.limits.request-pool-share} and the shard size first, so a
 *       staging request that can never fit fails without evicting anybody's blocks;
 *   <li>the pool is tried, then unreferenced cached blocks are evicted in LRU batches, then queued Saves are awaited
 *       once ({@link PoolReclaimer});
 *   <li>what is leased, locked for a transfer, being saved or staging for another push is never a victim, so when only
 *       such memory is left the request fails with RESOURCE_EXHAUSTED and nothing stays allocated.
 * </ol>
 *
 * <p>Staging is invisible to the cache: it has no key, is never indexed, announced, spilled or served, and goes back to
 * the pool with {@link PinnedAllocation#release()} by its one owner.
 *
 * <p>Thread-safe; may wait, with the Save deadline, for queued seals (never under an engine lock).
 */
public final class StagingAllocator {
    private final PoolReclaimer reclaimer;
    private final RequestShare share;

    StagingAllocator(PoolReclaimer reclaimer, RequestShare share) {
        this.reclaimer = reclaimer;
        this.share = share;
    }

    /**
     * Allocates {@code bytes} of contiguous pool memory for {@code purpose}, evicting unreferenced cached blocks when
     * the pool is full.
     *
     * @param purpose what the memory is for, as an error names it ("push staging of instance x rank 0")
     * @return an allocation with one reference, owned by the caller
     * @throws EngineException RESOURCE_EXHAUSTED when the request is larger than one request may take, or when the
     *     pool stays full after every unreferenced cached block was evicted
     */
    public PinnedAllocation allocate(String purpose, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("staging bytes must be positive: " + bytes);
        }
        share.check(purpose, bytes, bytes, "");
        PinnedAllocation a = reclaimer.allocate(bytes);
        if (a == null) {
            throw EngineException.resourceExhausted(purpose + ": the pool has no room for " + bytes
                    + " bytes after evicting every unreferenced cached block (the rest is leased, locked for a"
                    + " transfer, being saved or staging)");
        }
        return a;
    }
}
