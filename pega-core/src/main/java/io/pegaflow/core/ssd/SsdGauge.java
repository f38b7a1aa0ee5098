package io.pegaflow.core.ssd;

/** The SSD tier's levels (they go up and down), read through {@link SsdMetricsView#gauge}. */
public enum SsdGauge {
    /** Blocks queued for writing, not yet taken by the writer. */
    WRITE_QUEUE_PENDING,
    /** Block writes in progress. */
    WRITE_INFLIGHT,
    /** Blocks queued for reading, not yet taken by the prefetch dispatcher. */
    PREFETCH_QUEUE_PENDING,
    /** Block reads in progress. */
    PREFETCH_INFLIGHT,
    /** Blocks reserved against {@code max-prefetch-blocks}. */
    PREFETCH_RESERVED
}
