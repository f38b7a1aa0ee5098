package io.pegaflow.server.internode;

import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.transfer.PeerId;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One lazily connected gRPC channel per peer's advertised address (the reference's cached lazy channel), plaintext or
 * TLS as {@code pega.cluster.ssl-bundle} says (docs/security.md). Every call made through it carries a deadline. Closed
 * with the {@link GrpcPeerBlocks} that holds it.
 */
final class PeerLinks implements AutoCloseable {
    private final Map<PeerId, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final ChannelCredentials transport;
    private final ClientInterceptor credential;
    private volatile boolean closed;

    /**
     * @param transport plaintext or TLS (with the client certificate a peer requiring one checks)
     * @param credential on every call: peers require the cluster credential on the transfer RPCs when they have one
     */
    PeerLinks(ChannelCredentials transport, ClientInterceptor credential) {
        this.transport = transport;
        this.credential = credential;
    }

    EngineGrpc.EngineBlockingStub blocking(PeerId peer, long timeoutNanos) {
        return EngineGrpc.newBlockingStub(channel(peer)).withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS);
    }

    EngineGrpc.EngineStub async(PeerId peer, long timeoutNanos) {
        return EngineGrpc.newStub(channel(peer)).withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS);
    }

    private ManagedChannel channel(PeerId peer) {
        if (closed) {
            throw new IllegalStateException("peer links closed");
        }
        return channels.computeIfAbsent(
                peer,
                p -> Grpc.newChannelBuilder(target(p.address()), transport)
                        .intercept(credential)
                        .build());
    }

    /** {@code http://host:port} or {@code host:port} (the metaserver's node names) as a gRPC target. */
    static String target(String address) {
        String a = address.strip();
        if (a.startsWith("http://")) {
            return a.substring("http://".length());
        }
        return a;
    }

    @Override
    public void close() {
        closed = true;
        for (ManagedChannel c : channels.values()) {
            c.shutdownNow();
        }
        for (ManagedChannel c : channels.values()) {
            try {
                c.awaitTermination(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        channels.clear();
    }
}
