package io.pegaflow.bench.loadgen;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * What the workers measure, recorded wait-free from every worker thread: HdrHistogram latencies per RPC and per
 * operation (microseconds, 3 significant digits, up to 10 minutes), and counters for throughput, hits and errors.
 * Nothing is recorded before {@link #startRecording()} (the warm-up).
 */
final class Stats {
    /** The RPCs whose latency is recorded. */
    enum Rpc {
        QUERY("QueryPrefetch"),
        SAVE("Save"),
        LOAD("Load"),
        LOAD_DONE("Load+wait"),
        RELEASE("Release");

        final String label;

        Rpc(String label) {
            this.label = label;
        }
    }

    static final long HIGHEST_US = 600_000_000L;
    private static final int MAX_ERROR_SAMPLES = 10;

    private final Map<Rpc, Recorder> rpc = new EnumMap<>(Rpc.class);
    private final Map<OpMix.Op, Recorder> op = new EnumMap<>(OpMix.Op.class);
    private final Map<OpMix.Op, LongAdder> opCounts = new EnumMap<>(OpMix.Op.class);
    final LongAdder ops = new LongAdder();
    final LongAdder savedBlocks = new LongAdder();
    final LongAdder savedBytes = new LongAdder();
    final LongAdder loadedBlocks = new LongAdder();
    final LongAdder loadedBytes = new LongAdder();
    final LongAdder queriedBlocks = new LongAdder();
    final LongAdder hitBlocks = new LongAdder();
    final LongAdder verifiedBlocks = new LongAdder();
    final LongAdder verifyFailures = new LongAdder();
    final LongAdder errors = new LongAdder();
    /** RPCs that failed with UNAVAILABLE (server down or restarting); each made its worker back off. */
    final LongAdder unavailable = new LongAdder();
    /** Nanoseconds workers spent backing off after UNAVAILABLE, summed over workers. */
    final LongAdder backoffNanos = new LongAdder();
    /** QueryPrefetch answers of Loading (a slower tier still fetching), each followed by another poll. */
    final LongAdder loadingPolls = new LongAdder();

    private final ConcurrentLinkedQueue<String> errorSamples = new ConcurrentLinkedQueue<>();
    private final AtomicInteger errorSampleCount = new AtomicInteger();
    private volatile boolean recording;

    /** The constructor put an entry for every constant into each of the maps above. */
    private static <K, V> V entry(Map<K, V> map, K key) {
        return Objects.requireNonNull(map.get(key), "every constant has an entry");
    }

    Stats() {
        for (Rpc r : Rpc.values()) {
            rpc.put(r, new Recorder(HIGHEST_US, 3));
        }
        for (OpMix.Op o : OpMix.Op.values()) {
            op.put(o, new Recorder(HIGHEST_US, 3));
            opCounts.put(o, new LongAdder());
        }
    }

    /** Drops everything seen so far (the warm-up) and starts counting. */
    void startRecording() {
        rpc.values().forEach(Recorder::reset);
        op.values().forEach(Recorder::reset);
        opCounts.values().forEach(LongAdder::reset);
        for (LongAdder a : List.of(
                ops,
                savedBlocks,
                savedBytes,
                loadedBlocks,
                loadedBytes,
                queriedBlocks,
                hitBlocks,
                verifiedBlocks,
                verifyFailures,
                errors,
                unavailable,
                backoffNanos,
                loadingPolls)) {
            a.reset();
        }
        errorSamples.clear();
        errorSampleCount.set(0);
        recording = true;
    }

    boolean recording() {
        return recording;
    }

    void rpc(Rpc which, long nanos) {
        if (recording) {
            entry(rpc, which).recordValue(Math.min(HIGHEST_US, Math.max(1, nanos / 1000)));
        }
    }

    void op(OpMix.Op which, long nanos) {
        if (recording) {
            entry(op, which).recordValue(Math.min(HIGHEST_US, Math.max(1, nanos / 1000)));
            entry(opCounts, which).increment();
            ops.increment();
        }
    }

    void add(LongAdder counter, long delta) {
        if (recording) {
            counter.add(delta);
        }
    }

    void error(String what) {
        if (!recording) {
            return;
        }
        errors.increment();
        if (errorSampleCount.incrementAndGet() <= MAX_ERROR_SAMPLES) {
            errorSamples.add(what);
        }
    }

    List<String> errorSamples() {
        return new ArrayList<>(errorSamples);
    }

    long opCount(OpMix.Op which) {
        return entry(opCounts, which).sum();
    }

    /** The latencies recorded since the last call (call once, at the end). */
    Map<Rpc, Histogram> takeRpcHistograms() {
        Map<Rpc, Histogram> out = new EnumMap<>(Rpc.class);
        rpc.forEach((k, v) -> out.put(k, v.getIntervalHistogram()));
        return out;
    }

    Map<OpMix.Op, Histogram> takeOpHistograms() {
        Map<OpMix.Op, Histogram> out = new EnumMap<>(OpMix.Op.class);
        op.forEach((k, v) -> out.put(k, v.getIntervalHistogram()));
        return out;
    }

    /** A snapshot of the counters, for the progress bar and the timeline. */
    Sample sample(double elapsedSeconds) {
        return new Sample(
                elapsedSeconds,
                ops.sum(),
                savedBlocks.sum(),
                savedBytes.sum(),
                loadedBlocks.sum(),
                loadedBytes.sum(),
                queriedBlocks.sum(),
                hitBlocks.sum(),
                errors.sum());
    }

    record Sample(
            double seconds,
            long ops,
            long savedBlocks,
            long savedBytes,
            long loadedBlocks,
            long loadedBytes,
            long queriedBlocks,
            long hitBlocks,
            long errors) {}
}
