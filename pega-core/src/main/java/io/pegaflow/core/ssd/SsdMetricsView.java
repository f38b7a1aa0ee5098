package io.pegaflow.core.ssd;

/**
 * The SSD tier's counters and levels, read-only: what the server's meter binder and the admin API read (both
 * through this view, keyed by {@link SsdCounter}, {@link SsdGauge} and {@link SsdErrorKind}); per-shard figures are
 * {@link SsdStore#shardStatus()}. Values are read at call time; none is a snapshot of the others.
 */
public interface SsdMetricsView {

    /** The current value of one counter. */
    long count(SsdCounter counter);

    /** The current value of one level. */
    long gauge(SsdGauge gauge);

    /** Errors of one kind so far. */
    long errors(SsdErrorKind kind);

    /** Blocks reserved against {@code max-prefetch-blocks} now; the same as {@code gauge(PREFETCH_RESERVED)}. */
    default long prefetchReserved() {
        return gauge(SsdGauge.PREFETCH_RESERVED);
    }
}
