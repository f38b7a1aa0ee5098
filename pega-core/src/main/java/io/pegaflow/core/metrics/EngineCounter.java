package io.pegaflow.core.metrics;

/**
 * The engine's monotonic counters, one per exported meter (the server maps each to its {@code pegaflow_*} catalog
 * entry, see {@code docs/metrics.md}). Keyed reads through {@link EngineMetricsView#count} let the binder and the
 * admin API read the same values the same way.
 */
public enum EngineCounter {
    /** Pool allocations that failed after reclaim. */
    POOL_ALLOC_FAILURES,
    /** Incomplete (unsealed) blocks dropped by age. */
    INFLIGHT_GC_CLEANED,
    /** Requested blocks the RAM cache returned to queries. */
    CACHE_BLOCK_HITS,
    /** Requested blocks the RAM cache did not hold. */
    CACHE_BLOCK_MISSES,
    /** Blocks inserted into the RAM index (sealed or prefetched). */
    CACHE_INSERTIONS,
    /** Blocks the admission policy refused. */
    CACHE_ADMISSION_REJECTIONS,
    /** Blocks evicted from the cache. */
    CACHE_EVICTIONS,
    /** Of those, blocks evicted after a sealed Save to keep the pool's headroom free (none on a request thread). */
    CACHE_EVICTIONS_AHEAD,
    /** Evicted blocks still held elsewhere (a lease, an SSD write), so their memory returns later. */
    CACHE_EVICTIONS_STILL_REFERENCED,
    /** Pinned bytes freed by eviction. */
    CACHE_EVICTION_RECLAIMED_BYTES,
    /** Padded bytes saved. */
    SAVE_BYTES,
    /** Bytes loaded to devices. */
    LOAD_BYTES,
    /** Loads that failed. */
    LOAD_FAILURES,
    /** Ours: saves of already-sealed blocks dropped at sealing instead of leaking an inflight entry. */
    SEAL_DUPLICATES_DROPPED
}
