package io.pegaflow.testkit;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import java.util.concurrent.TimeUnit;

/** Channels configured like the reference connector's tonic client (novitalabs/pegaflow v0.22.4). */
final class TestkitChannels {
    /** Both sides of the reference set 64 MiB. */
    static final int MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

    private static final long KEEPALIVE_SECONDS = 30;
    private static final long WATCH_KEEPALIVE_SECONDS = 10;
    private static final long WATCH_KEEPALIVE_TIMEOUT_SECONDS = 5;
    private static final int CONNECT_TIMEOUT_MILLIS = 500;
    private static final long SHUTDOWN_WAIT_SECONDS = 5;

    private TestkitChannels() {}

    /**
     * Plaintext HTTP/2 with keepalive PINGs every 30 s even while idle, exactly the traffic that makes a grpc-java
     * server with default keepalive policy answer GOAWAY {@code too_many_pings}.
     */
    static ManagedChannel open(String host, int port) {
        return open(host, port, InsecureChannelCredentials.create());
    }

    /** As {@link #open(String, int)} over {@code transport} (TLS for a listener that requires it). */
    static ManagedChannel open(String host, int port, ChannelCredentials transport) {
        return NettyChannelBuilder.forAddress(host, port, transport)
                .maxInboundMessageSize(MAX_MESSAGE_BYTES)
                .keepAliveTime(KEEPALIVE_SECONDS, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(true)
                .withOption(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MILLIS)
                .withOption(ChannelOption.TCP_NODELAY, true)
                .build();
    }

    /**
     * As {@link #open} but pinging every 10 s (gRPC's floor, what pega-server permits) and giving up on a ping after
     * 5 s, so that a worker waiting on a verdict learns within about 15 s that its server's host vanished without
     * closing its sockets (the channel leaves READY).
     */
    static ManagedChannel openWatching(String host, int port) {
        return NettyChannelBuilder.forAddress(host, port)
                .usePlaintext()
                .maxInboundMessageSize(MAX_MESSAGE_BYTES)
                .keepAliveTime(WATCH_KEEPALIVE_SECONDS, TimeUnit.SECONDS)
                .keepAliveTimeout(WATCH_KEEPALIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(true)
                .withOption(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MILLIS)
                .withOption(ChannelOption.TCP_NODELAY, true)
                .build();
    }

    /** Shuts the channel down now and waits briefly for its transports to go. */
    static void shutdown(ManagedChannel channel) {
        channel.shutdownNow();
        try {
            channel.awaitTermination(SHUTDOWN_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
