package io.pegaflow.core.ssd;

import io.pegaflow.core.metrics.DurationRecorder;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The SSD tier's counters and gauges, as plain adders read at scrape time (the server exports them, see
 * {@code docs/ssd.md}); per-shard bytes live in {@link ShardStatus}. The core knows nothing about Micrometer: the
 * prefetch-duration histogram is a {@link DurationRecorder} the server binds before traffic starts.
 */
public final class SsdMetrics {
    /** Blocks written and committed. */
    public final LongAdder writeBlocks = new LongAdder();
    /** Bytes written (headers included). */
    public final LongAdder writeBytes = new LongAdder();
    /** Writes that failed (I/O error or short write). */
    public final LongAdder writeFailures = new LongAdder();
    /** Blocks dropped because the write queue was full. */
    public final LongAdder writeQueueFull = new LongAdder();
    /** Queued blocks already freed when the writer reached them (write-behind only for blocks still alive). */
    public final LongAdder writeSkippedFreed = new LongAdder();
    /** Prepared entries the ring reused before their write finished. */
    public final LongAdder writeOverwritten = new LongAdder();
    /** Blocks queued for writing, not yet taken by the writer. */
    public final AtomicLong writeQueuePending = new AtomicLong();
    /** Block writes in progress. */
    public final AtomicLong writeInflight = new AtomicLong();

    /** Blocks read back, verified and handed to the prefetch. */
    public final LongAdder prefetchBlocks = new LongAdder();
    /** Payload bytes read back. */
    public final LongAdder prefetchBytes = new LongAdder();
    /** Block reads that failed (I/O, checksum, overwritten during the read, no pool memory). */
    public final LongAdder prefetchFailures = new LongAdder();
    /** Blocks not fetched because the prefetch queue was full. */
    public final LongAdder prefetchQueueFull = new LongAdder();
    /** Blocks not fetched because {@code max-prefetch-blocks} were already being read. */
    public final LongAdder prefetchBackpressureBlocks = new LongAdder();
    /** Blocks queued for reading, not yet taken by the prefetch dispatcher. */
    public final AtomicLong prefetchQueuePending = new AtomicLong();
    /** Block reads in progress. */
    public final AtomicLong prefetchInflight = new AtomicLong();
    /** Blocks reserved against {@code max-prefetch-blocks}. */
    public final AtomicLong prefetchReserved = new AtomicLong();

    /** Entries the start-up scan put back in the index. */
    public final LongAdder recoveredEntries = new LongAdder();
    /** Entries the start-up scan found torn, corrupt or overwritten and dropped. */
    public final LongAdder recoveryDroppedEntries = new LongAdder();

    private final Map<SsdErrorKind, LongAdder> errors = new EnumMap<>(SsdErrorKind.class);
    private volatile DurationRecorder prefetchDuration = DurationRecorder.NOOP;

    public SsdMetrics() {
        for (SsdErrorKind kind : SsdErrorKind.values()) {
            errors.put(kind, new LongAdder());
        }
    }

    void error(SsdErrorKind kind) {
        errors.get(kind).increment();
    }

    /** Errors of one kind so far. */
    public long errors(SsdErrorKind kind) {
        return errors.get(kind).sum();
    }

    /** The adder behind {@link #errors(SsdErrorKind)}, for function counters. */
    public LongAdder errorCounter(SsdErrorKind kind) {
        return errors.get(kind);
    }

    /** Time from a prefetch request to its result (queueing, allocation, reads, verification). */
    public DurationRecorder prefetchDuration() {
        return prefetchDuration;
    }

    public void bindPrefetchDuration(DurationRecorder recorder) {
        this.prefetchDuration = recorder == null ? DurationRecorder.NOOP : recorder;
    }
}
