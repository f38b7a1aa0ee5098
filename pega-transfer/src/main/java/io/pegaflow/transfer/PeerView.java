package io.pegaflow.transfer;

import java.util.List;
import java.util.Map;

/**
 * One peer as the engine sees it. Counters cover every connection the engine ever had to this address; the state and
 * the lanes describe the current one.
 *
 * @param state {@code CONNECTING}, {@code ESTABLISHED}, or {@code DISCONNECTED} after a failure or a disconnect
 * @param lanes the current connection's lanes, empty when disconnected
 * @param connects handshakes completed with this peer
 * @param drops connections dropped: failures, disconnects, replacements by a new handshake
 * @param errors failed batches by {@link TransferException.Kind} name
 * @param lastError the most recent failure's message, or empty
 * @param latencyP50Micros median batch latency from submit to completion, 0 before the first batch
 * @param latencyP99Micros 99th percentile, same units (a power-of-two bucket's upper bound)
 * @param latencyMaxMicros the slowest batch
 */
public record PeerView(
        PeerId peer,
        String state,
        List<LaneView> lanes,
        long connects,
        long drops,
        long inFlightOps,
        long batches,
        long opsCompleted,
        long opsFailed,
        long bytesRead,
        long bytesWritten,
        Map<String, Long> errors,
        String lastError,
        long latencyP50Micros,
        long latencyP99Micros,
        long latencyMaxMicros) {

    public PeerView {
        lanes = List.copyOf(lanes);
        errors = Map.copyOf(errors);
    }

    /**
     * One connection ("QP") to the peer.
     *
     * @param index the lane: connection {@code i} runs on worker {@code i} of both nodes
     * @param state {@code OPENING}, {@code OPEN}, {@code FAILED}, {@code CLOSING} or {@code CLOSED}
     * @param inFlightOps operations on this connection not yet completed
     * @param opsIssued operations ever put on this connection
     */
    public record LaneView(int index, String state, long inFlightOps, long opsIssued) {}
}
