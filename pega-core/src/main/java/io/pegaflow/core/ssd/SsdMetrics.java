package io.pegaflow.core.ssd;

import io.pegaflow.core.metrics.DurationRecorder;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The SSD tier's counters and levels as plain adders: only this package writes them; everyone else reads the
 * {@link SsdMetricsView} ({@link SsdStore#metrics()}). The core knows nothing about Micrometer: the prefetch-duration
 * histogram is a {@link DurationRecorder} the server binds before traffic starts ({@link
 * SsdStore#bindPrefetchDuration}).
 */
final class SsdMetrics implements SsdMetricsView {
    // Filled once in the constructor and never changed, so reads need no lock.
    private final Map<SsdCounter, LongAdder> counters = new EnumMap<>(SsdCounter.class);
    private final Map<SsdGauge, AtomicLong> gauges = new EnumMap<>(SsdGauge.class);
    private final Map<SsdErrorKind, LongAdder> errors = new EnumMap<>(SsdErrorKind.class);
    private volatile DurationRecorder prefetchDuration = DurationRecorder.NOOP;

    SsdMetrics() {
        for (SsdCounter c : SsdCounter.values()) {
            counters.put(c, new LongAdder());
        }
        for (SsdGauge g : SsdGauge.values()) {
            gauges.put(g, new AtomicLong());
        }
        for (SsdErrorKind k : SsdErrorKind.values()) {
            errors.put(k, new LongAdder());
        }
    }

    private LongAdder counter(SsdCounter c) {
        return Objects.requireNonNull(counters.get(c), "every counter has a cell from construction");
    }

    private AtomicLong gauge0(SsdGauge g) {
        return Objects.requireNonNull(gauges.get(g), "every gauge has a cell from construction");
    }

    private LongAdder error0(SsdErrorKind k) {
        return Objects.requireNonNull(errors.get(k), "every error kind has a cell from construction");
    }

    void increment(SsdCounter counter) {
        counter(counter).increment();
    }

    void add(SsdCounter counter, long n) {
        counter(counter).add(n);
    }

    /** Moves a level by {@code delta}; returns the new value. */
    long addGauge(SsdGauge gauge, long delta) {
        return gauge0(gauge).addAndGet(delta);
    }

    /**
     * The cell behind {@code max-prefetch-blocks}: {@link SsdBackingTier} reserves against it with compare-and-set,
     * so the exported level is the budget itself, not a copy of it.
     */
    AtomicLong prefetchReservedCell() {
        return gauge0(SsdGauge.PREFETCH_RESERVED);
    }

    void error(SsdErrorKind kind) {
        error0(kind).increment();
    }

    @Override
    public long count(SsdCounter counter) {
        return counter(counter).sum();
    }

    @Override
    public long gauge(SsdGauge gauge) {
        return gauge0(gauge).get();
    }

    @Override
    public long errors(SsdErrorKind kind) {
        return error0(kind).sum();
    }

    /** Time from a prefetch request to its result (queueing, allocation, reads, verification). */
    DurationRecorder prefetchDuration() {
        return prefetchDuration;
    }

    void bindPrefetchDuration(DurationRecorder recorder) {
        this.prefetchDuration = recorder == null ? DurationRecorder.NOOP : recorder;
    }
}
