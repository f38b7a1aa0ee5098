package io.pegaflow.core.metrics;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The engine's counters, kept as plain adders so the hot paths pay one uncontended add. The server exports them
 * with the reference's Prometheus names (see {@code docs/metrics.md}); the core knows nothing about Micrometer.
 *
 * <p>Durations go through {@link DurationRecorder}s that the server installs before traffic starts.
 */
public final class EngineMetrics {
    public final LongAdder poolAllocFailures = new LongAdder();
    public final AtomicLong inflightBytes = new AtomicLong();
    public final LongAdder inflightGcCleaned = new LongAdder();
    public final LongAdder cacheBlockHits = new LongAdder();
    public final LongAdder cacheBlockMisses = new LongAdder();
    public final LongAdder cacheInsertions = new LongAdder();
    public final LongAdder cacheAdmissionRejections = new LongAdder();
    public final LongAdder cacheEvictions = new LongAdder();
    public final LongAdder cacheEvictionsStillReferenced = new LongAdder();
    public final LongAdder cacheEvictionReclaimedBytes = new LongAdder();
    public final LongAdder saveBytes = new LongAdder();
    public final LongAdder loadBytes = new LongAdder();
    public final LongAdder loadFailures = new LongAdder();
    /** Ours: saves of already-sealed blocks dropped at sealing instead of leaking an inflight entry. */
    public final LongAdder sealDuplicatesDropped = new LongAdder();

    /** Requested blocks by the tier that answered them: ram, each backing tier's name, miss. */
    private final Map<String, LongAdder> tierRequests = new ConcurrentHashMap<>();

    private volatile DurationRecorder saveDuration = DurationRecorder.NOOP;

    public EngineMetrics() {
        // The series a dashboard expects exist from the start, even before (or without) that tier.
        for (String tier : new String[] {"ram", "ssd", "rdma", "miss"}) {
            tierRequests.put(tier, new LongAdder());
        }
    }

    /** Counts {@code blocks} requested blocks answered by {@code tier} (one query decision's share). */
    public void countTierRequests(String tier, int blocks) {
        tierRequests.computeIfAbsent(tier, t -> new LongAdder()).add(blocks);
    }

    /** Requested blocks answered by {@code tier} so far (0 for a tier never seen). */
    public long tierRequests(String tier) {
        LongAdder a = tierRequests.get(tier);
        return a == null ? 0 : a.sum();
    }

    /** The tiers counted so far, in no particular order. */
    public Set<String> tierNames() {
        return Set.copyOf(tierRequests.keySet());
    }

    private volatile DurationRecorder loadDuration = DurationRecorder.NOOP;

    public DurationRecorder saveDuration() {
        return saveDuration;
    }

    public DurationRecorder loadDuration() {
        return loadDuration;
    }

    public void bindSaveDuration(DurationRecorder recorder) {
        this.saveDuration = recorder;
    }

    public void bindLoadDuration(DurationRecorder recorder) {
        this.loadDuration = recorder;
    }
}
