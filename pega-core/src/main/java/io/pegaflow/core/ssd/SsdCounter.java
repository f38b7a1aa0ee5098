package io.pegaflow.core.ssd;

/**
 * The SSD tier's monotonic counters, one per exported meter (the server maps each to its {@code pegaflow_ssd_*}
 * catalog entry, see {@code docs/metrics.md}); read through {@link SsdMetricsView#count}. Errors by kind are
 * {@link SsdMetricsView#errors}.
 */
public enum SsdCounter {
    /** Blocks written and committed. */
    WRITE_BLOCKS,
    /** Bytes written (headers included). */
    WRITE_BYTES,
    /** Writes that failed (I/O error or short write). */
    WRITE_FAILURES,
    /** Blocks dropped because the write queue was full. */
    WRITE_QUEUE_FULL,
    /** Queued blocks already freed when the writer reached them (write-behind only for blocks still alive). */
    WRITE_SKIPPED_FREED,
    /** Prepared entries the ring reused before their write finished. */
    WRITE_OVERWRITTEN,
    /** Blocks read back, verified and handed to the prefetch. */
    PREFETCH_BLOCKS,
    /** Payload bytes read back. */
    PREFETCH_BYTES,
    /** Block reads that failed (I/O, checksum, overwritten during the read, no pool memory). */
    PREFETCH_FAILURES,
    /** Blocks not fetched because the prefetch queue was full. */
    PREFETCH_QUEUE_FULL,
    /** Blocks not fetched because {@code max-prefetch-blocks} were already being read. */
    PREFETCH_BACKPRESSURE_BLOCKS,
    /** Entries the start-up scan put back in the index. */
    RECOVERED_ENTRIES,
    /** Entries the start-up scan found torn, corrupt or overwritten and dropped. */
    RECOVERY_DROPPED_ENTRIES
}
