package io.pegaflow.transfer;

import java.util.List;

/**
 * A read-only snapshot of the engine for metrics and the dashboard: what it runs on and every peer it has talked to.
 * Taken without stopping traffic, so counters of different peers may be a few operations apart.
 *
 * @param fabric {@code ucx} or {@code loopback}
 * @param transports the UCX transport list asked for, empty when UCX chose
 * @param lanes connections per peer ({@code qps_per_peer}), one worker and progress thread each
 * @param registeredRegions local regions peers can address
 * @param registeredBytes their total length
 */
public record TransferView(
        String fabric,
        List<String> nics,
        String transports,
        int lanes,
        int registeredRegions,
        long registeredBytes,
        boolean closed,
        List<PeerView> peers) {

    public TransferView {
        nics = List.copyOf(nics);
        peers = List.copyOf(peers);
    }

    /** Operations submitted and not yet completed, over all peers. */
    public long inFlightOps() {
        return peers.stream().mapToLong(PeerView::inFlightOps).sum();
    }
}
