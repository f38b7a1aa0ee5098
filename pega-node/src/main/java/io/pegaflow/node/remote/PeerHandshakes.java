package io.pegaflow.node.remote;

import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.TransferEngine;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The requester's side of the handshake ({@link PeerBlocks#handshake}, the reference's {@code RdmaHandshake} in
 * novitalabs/pegaflow v0.22.4): once per peer, deduplicated per address (a single flight: concurrent fetches from one
 * peer wait for the first one's handshake; if it fails, the next fetch tries again). The owner connects back inside the
 * RPC, then this node connects with the owner's descriptor.
 */
final class PeerHandshakes {
    private final TransferEngine transfers;
    private final PeerBlocks peers;
    private final String self;
    private final long timeoutNanos;
    private final Map<PeerId, CompletableFuture<Void>> inFlight = new ConcurrentHashMap<>();

    private final Consumer<PeerId> connected;

    PeerHandshakes(
            TransferEngine transfers, PeerBlocks peers, String self, long timeoutNanos, Consumer<PeerId> connected) {
        this.connected = connected;
        this.transfers = transfers;
        this.peers = peers;
        this.self = self;
        this.timeoutNanos = timeoutNanos;
    }

    /**
     * Returns once the peer is connected.
     *
     * @throws Exception whatever failed: the RPC, an empty or undecodable answer, the connect, the deadline
     */
    void ensureConnected(PeerId peer) throws Exception {
        if (transfers.isConnected(peer)) {
            return;
        }
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> leader = inFlight.putIfAbsent(peer, mine);
        if (leader != null) {
            await(leader);
            return;
        }
        try {
            handshake(peer);
            mine.complete(null);
        } catch (Exception | Error e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            inFlight.remove(peer, mine);
        }
    }

    private void handshake(PeerId peer) throws Exception {
        byte[] answer = peers.handshake(peer, self, transfers.localDescriptor().encode(), timeoutNanos);
        if (answer.length == 0) {
            throw new IllegalStateException("peer " + peer + " answered the handshake with no metadata");
        }
        HandshakeDescriptor remote = HandshakeDescriptor.decode(answer);
        await(transfers.connect(peer, remote, timeoutNanos));
        connected.accept(peer);
    }

    private void await(CompletableFuture<Void> f) throws Exception {
        try {
            f.get(timeoutNanos + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw cause instanceof Exception ex ? ex : e;
        } catch (TimeoutException e) {
            throw new TimeoutException("handshake did not complete in time");
        }
    }
}
