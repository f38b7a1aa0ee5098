package io.pegaflow.core.metrics;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The engine's counters, kept as plain adders so the hot paths pay one uncontended add. Only the engine's own paths
 * write them (through the methods below); everyone else gets the {@link EngineMetricsView}. The server exports them
 * with the reference's Prometheus names (see {@code docs/metrics.md}); the core knows nothing about Micrometer.
 *
 * <p>Durations go through {@link DurationRecorder}s that the server installs before traffic starts.
 */
public final class EngineMetrics implements EngineMetricsView {
    /** Filled once here and never changed, so reads need no lock (an EnumMap is an array indexed by the key). */
    private final Map<EngineCounter, LongAdder> counters = new EnumMap<>(EngineCounter.class);

    private final AtomicLong inflightBytes = new AtomicLong();

    /** Requested blocks by the tier that answered them: ram, each backing tier's name, miss. */
    private final Map<String, LongAdder> tierRequests = new ConcurrentHashMap<>();

    private final PhaseRecorders<SavePhase> savePhases = new PhaseRecorders<>(SavePhase.class);
    private final PhaseRecorders<LoadPhase> loadPhases = new PhaseRecorders<>(LoadPhase.class);

    private volatile DurationRecorder saveDuration = DurationRecorder.NOOP;
    private volatile DurationRecorder loadDuration = DurationRecorder.NOOP;

    public EngineMetrics() {
        for (EngineCounter c : EngineCounter.values()) {
            counters.put(c, new LongAdder());
        }
        // The series a dashboard expects exist from the start, even before (or without) that tier: the reference's
        // labels, "rdma" for blocks from a peer; a chain's other tiers are added by the engine at launch.
        for (String tier : new String[] {"ram", "ssd", "rdma", "miss"}) {
            tierRequests.put(tier, new LongAdder());
        }
    }

    private LongAdder cell(EngineCounter counter) {
        return Objects.requireNonNull(counters.get(counter), "every counter has a cell from construction");
    }

    /** Adds one to {@code counter}. */
    public void increment(EngineCounter counter) {
        cell(counter).increment();
    }

    /** Adds {@code n} (never negative: these are counters) to {@code counter}. */
    public void add(EngineCounter counter, long n) {
        cell(counter).add(n);
    }

    /** Moves the inflight level by {@code delta} bytes (positive when a save parks memory, negative when it leaves). */
    public void addInflightBytes(long delta) {
        inflightBytes.addAndGet(delta);
    }

    /** Counts {@code blocks} requested blocks answered by {@code tier} (one query decision's share). */
    public void countTierRequests(String tier, int blocks) {
        tierRequests.computeIfAbsent(tier, t -> new LongAdder()).add(blocks);
    }

    @Override
    public long count(EngineCounter counter) {
        return cell(counter).sum();
    }

    @Override
    public long inflightBytes() {
        return inflightBytes.get();
    }

    @Override
    public long tierRequests(String tier) {
        LongAdder a = tierRequests.get(tier);
        return a == null ? 0 : a.sum();
    }

    @Override
    public Set<String> tierNames() {
        return Set.copyOf(tierRequests.keySet());
    }

    public DurationRecorder saveDuration() {
        return saveDuration;
    }

    public DurationRecorder loadDuration() {
        return loadDuration;
    }

    /** The per-phase recorders of Save ({@code pegaflow_save_phase_seconds}). */
    public PhaseRecorders<SavePhase> savePhases() {
        return savePhases;
    }

    /** The per-phase recorders of Load ({@code pegaflow_load_phase_seconds}). */
    public PhaseRecorders<LoadPhase> loadPhases() {
        return loadPhases;
    }

    public void bindSaveDuration(DurationRecorder recorder) {
        this.saveDuration = recorder == null ? DurationRecorder.NOOP : recorder;
    }

    public void bindLoadDuration(DurationRecorder recorder) {
        this.loadDuration = recorder == null ? DurationRecorder.NOOP : recorder;
    }
}
