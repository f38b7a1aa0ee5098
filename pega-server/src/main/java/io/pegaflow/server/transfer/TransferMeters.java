package io.pegaflow.server.transfer;

import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.server.metrics.ServerMetric;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.PeerView;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferView;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The per-peer entries of the catalog ({@code pegaflow_transfer_peer_*}), registered at a peer's first handshake in
 * either direction and read from one {@link TransferView} snapshot per scrape (a snapshot younger than 250 ms is
 * reused, so a scrape costs one view however many series there are).
 */
public final class TransferMeters {
    static final List<String> LANE_STATES = List.of("OPENING", "OPEN", "FAILED", "CLOSING", "CLOSED");
    private static final long REUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private final CatalogMeters meters;
    private final TransferEngine engine;
    private final NanoClock clock;
    private final Set<String> bound = ConcurrentHashMap.newKeySet();
    private volatile @Nullable TransferView cached; // null until the first read
    private volatile long cachedAtNanos;

    TransferMeters(CatalogMeters meters, TransferEngine engine, NanoClock clock) {
        this.meters = meters;
        this.engine = engine;
        this.clock = clock;
    }

    TransferView view() {
        long now = clock.nanoTime();
        TransferView v = cached;
        if (v == null || now - cachedAtNanos > REUSE_NANOS) {
            v = engine.view();
            cached = v;
            cachedAtNanos = now;
        }
        return v;
    }

    /** Registers the peer's series once. */
    public void peerSeen(PeerId peer) {
        String a = peer.address();
        if (!bound.add(a)) {
            return;
        }
        for (String state : LANE_STATES) {
            meters.gauge(ServerMetric.PEGAFLOW_TRANSFER_PEER_CONNECTIONS, this, t -> t.lanes(a, state), a, state);
        }
        meters.gauge(ServerMetric.PEGAFLOW_TRANSFER_PEER_OPS_IN_FLIGHT, this, t -> t.peer(a, PeerView::inFlightOps), a);
        meters.countOf(ServerMetric.PEGAFLOW_TRANSFER_PEER_BYTES, this, t -> t.peer(a, PeerView::bytesRead), a, "read");
        meters.countOf(
                ServerMetric.PEGAFLOW_TRANSFER_PEER_BYTES, this, t -> t.peer(a, PeerView::bytesWritten), a, "written");
        meters.countOf(ServerMetric.PEGAFLOW_TRANSFER_PEER_ERRORS, this, t -> t.peer(a, TransferMeters::errors), a);
        meters.gauge(
                ServerMetric.PEGAFLOW_TRANSFER_PEER_LATENCY_P50_SECONDS,
                this,
                t -> t.peer(a, PeerView::latencyP50Micros) / 1e6,
                a);
        meters.gauge(
                ServerMetric.PEGAFLOW_TRANSFER_PEER_LATENCY_P99_SECONDS,
                this,
                t -> t.peer(a, PeerView::latencyP99Micros) / 1e6,
                a);
    }

    private static long errors(PeerView p) {
        long sum = 0;
        for (long n : p.errors().values()) {
            sum += n;
        }
        return sum;
    }

    private double peer(String address, java.util.function.ToLongFunction<PeerView> value) {
        for (PeerView p : view().peers()) {
            if (p.peer().address().equals(address)) {
                return value.applyAsLong(p);
            }
        }
        return 0;
    }

    private double lanes(String address, String state) {
        for (PeerView p : view().peers()) {
            if (p.peer().address().equals(address)) {
                return p.lanes().stream().filter(l -> l.state().equals(state)).count();
            }
        }
        return 0;
    }

    /** Peers whose connection is established now. */
    double establishedPeers() {
        return view().peers().stream()
                .filter(p -> p.state().equals("ESTABLISHED"))
                .count();
    }

    double inFlightOps() {
        return view().inFlightOps();
    }
}
