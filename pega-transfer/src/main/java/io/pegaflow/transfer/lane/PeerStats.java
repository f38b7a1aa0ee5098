package io.pegaflow.transfer.lane;

import io.pegaflow.transfer.Direction;
import io.pegaflow.transfer.TransferException;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;

/** Counters for one peer address over all its connections. Updated from any thread, read by the view. */
final class PeerStats {
    final LongAdder connects = new LongAdder();
    final LongAdder drops = new LongAdder();
    final LongAdder inFlightOps = new LongAdder();
    final LongAdder batches = new LongAdder();
    final LongAdder opsCompleted = new LongAdder();
    final LongAdder opsFailed = new LongAdder();
    final LongAdder bytesRead = new LongAdder();
    final LongAdder bytesWritten = new LongAdder();
    final LatencyHistogram latency = new LatencyHistogram();
    private final Map<TransferException.Kind, LongAdder> errors = new EnumMap<>(TransferException.Kind.class);
    private volatile String lastError = "";

    PeerStats() {
        for (TransferException.Kind kind : TransferException.Kind.values()) {
            errors.put(kind, new LongAdder());
        }
    }

    void batchDone(Direction direction, int ops, int failedOps, long bytes, long latencyNanos) {
        batches.increment();
        inFlightOps.add(-ops);
        opsCompleted.add(ops - failedOps);
        opsFailed.add(failedOps);
        (direction == Direction.GET ? bytesRead : bytesWritten).add(bytes);
        latency.record(latencyNanos);
    }

    /** A batch ended with failed operations. */
    void batchFailed(TransferException e) {
        Objects.requireNonNull(errors.get(e.kind()), "every kind has a cell from construction")
                .increment();
        lastError = Objects.requireNonNullElse(e.getMessage(), e.kind().toString());
    }

    /** A connection was dropped (by a failure, a disconnect or a new handshake). */
    void connectionDropped(TransferException e) {
        drops.increment();
        lastError = Objects.requireNonNullElse(e.getMessage(), e.kind().toString());
    }

    String lastError() {
        return lastError;
    }

    /** Non-zero error counts by kind name. */
    Map<String, Long> errorCounts() {
        Map<String, Long> out = new TreeMap<>();
        errors.forEach((kind, n) -> {
            long v = n.sum();
            if (v > 0) {
                out.put(kind.name(), v);
            }
        });
        return out;
    }
}
