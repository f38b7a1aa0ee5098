package io.pegaflow.bench.fleet;

import io.grpc.Status;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * What the simulated nodes observe, recorded from any thread: a latency histogram per RPC (microseconds), outcomes by
 * RPC and status code, and block counters. Latencies and rates count only after {@link #startRecording()}; the
 * correctness counters (drops, mismatches, fence violations) count from the first call, warm-up included, because a
 * lost removal is lost whenever it happens.
 */
final class FleetStats {

    /** The metaserver RPCs. */
    enum Rpc {
        HEARTBEAT("HeartbeatNode"),
        INSERT("InsertBlockHashes"),
        REMOVE("RemoveBlockHashes"),
        QUERY("QueryPrefixBlocks"),
        UNREGISTER("UnregisterNode");

        final String label;

        Rpc(String label) {
            this.label = label;
        }
    }

    private static final long HIGHEST_US = 600_000_000L;

    private final Map<Rpc, Recorder> latency = new EnumMap<>(Rpc.class);
    private final Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
    /** Query latency of the current timeline second. */
    private final Recorder queryTimeline = new Recorder(HIGHEST_US, 3);

    private volatile boolean recording;

    // rates (measured window only)
    final LongAdder insertedBlocks = new LongAdder();
    final LongAdder removedBlocks = new LongAdder();
    final LongAdder queries = new LongAdder();
    final LongAdder queriedBlocks = new LongAdder();
    /** Blocks of queried prompts that another node could serve (best remote prefix). */
    final LongAdder remoteHitBlocks = new LongAdder();

    final LongAdder requests = new LongAdder();

    // correctness (whole run)
    /** Hashes in Insert calls that failed while the node held its session. */
    final LongAdder insertsFailed = new LongAdder();
    /** Hashes in Remove calls that failed while the node held its session. */
    final LongAdder removesFailed = new LongAdder();
    /** Hashes in batches the node's full queue refused (the server's *_queue_full). */
    final LongAdder insertsQueueFull = new LongAdder();

    final LongAdder removesQueueFull = new LongAdder();
    /** Acknowledged removals that removed fewer records than the node had announced. */
    final LongAdder removeMismatches = new LongAdder();
    /** Unregisters whose removed_owners differs from what the node had announced. */
    final LongAdder unregisterMismatches = new LongAdder();
    /** Writes with a superseded node_id that the metaserver accepted: must stay 0. */
    final LongAdder fenceViolations = new LongAdder();
    /** Writes with a superseded node_id that were refused, as they must be. */
    final LongAdder fencedWritesRefused = new LongAdder();
    /** Heartbeats of a re-joining node refused while its old session was still fresh (expected). */
    final LongAdder rejoinRefusals = new LongAdder();

    final LongAdder crashes = new LongAdder();
    final LongAdder rejoins = new LongAdder();
    final LongAdder reannouncements = new LongAdder();
    /** Requests a node skipped because it held no session (crashed, or waiting to take its address back). */
    final LongAdder requestsWithoutSession = new LongAdder();

    FleetStats() {
        for (Rpc r : Rpc.values()) {
            latency.put(r, new Recorder(HIGHEST_US, 3));
        }
    }

    void startRecording() {
        latency.values().forEach(Recorder::reset);
        for (LongAdder a :
                new LongAdder[] {insertedBlocks, removedBlocks, queries, queriedBlocks, remoteHitBlocks, requests}) {
            a.reset();
        }
        outcomes.clear();
        queryTimeline.reset();
        recording = true;
    }

    void stopRecording() {
        recording = false;
    }

    boolean recording() {
        return recording;
    }

    /** UnregisterNode latency, recorded after the measured window (the shutdown phase). */
    private final Recorder unregisterLatency = new Recorder(HIGHEST_US, 3);

    final LongAdder unregistersFailed = new LongAdder();

    /** One finished call: its latency and its outcome. */
    void call(Rpc rpc, long startNanos, Status.Code code) {
        if (rpc == Rpc.UNREGISTER) {
            unregisterLatency.recordValue(Math.min(HIGHEST_US, Math.max(1, (System.nanoTime() - startNanos) / 1000)));
            if (code != Status.Code.OK) {
                unregistersFailed.increment();
            }
            return;
        }
        if (!recording) {
            return;
        }
        long us = Math.max(1, (System.nanoTime() - startNanos) / 1000);
        Objects.requireNonNull(latency.get(rpc)).recordValue(Math.min(HIGHEST_US, us));
        if (rpc == Rpc.QUERY) {
            queryTimeline.recordValue(Math.min(HIGHEST_US, us));
        }
        outcomes.computeIfAbsent(rpc.label + " " + code, k -> new LongAdder()).increment();
    }

    void add(LongAdder counter, long n) {
        if (recording) {
            counter.add(n);
        }
    }

    /** Query latencies since the previous call (one timeline step). */
    Histogram takeQueryStep() {
        return queryTimeline.getIntervalHistogram();
    }

    Histogram takeUnregisterLatency() {
        return unregisterLatency.getIntervalHistogram();
    }

    Map<Rpc, Histogram> takeLatencies() {
        Map<Rpc, Histogram> out = new EnumMap<>(Rpc.class);
        latency.forEach((k, v) -> out.put(k, v.getIntervalHistogram()));
        return out;
    }

    /** Outcome counts keyed {@code "<rpc> <code>"}. */
    Map<String, Long> outcomes() {
        Map<String, Long> out = new java.util.TreeMap<>();
        outcomes.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    /** Lost announcements that nothing explains: every one is a defect of the metaserver or of the link. */
    long unexplainedDrops() {
        return insertsFailed.sum()
                + removesFailed.sum()
                + insertsQueueFull.sum()
                + removesQueueFull.sum()
                + removeMismatches.sum()
                + unregisterMismatches.sum()
                + unregistersFailed.sum();
    }

    /** Removals lost: failed, refused by a full queue, or acknowledged without removing the record. */
    long droppedRemovals() {
        return removesFailed.sum() + removesQueueFull.sum() + removeMismatches.sum();
    }
}
