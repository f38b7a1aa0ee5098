package io.pegaflow.bench.loadgen;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import java.util.concurrent.TimeUnit;

/** Client channels configured like the reference connector's: plaintext HTTP/2, 64 MiB messages, no Nagle. */
final class Channels {
    private static final int MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

    private Channels() {}

    static ManagedChannel open(String host, int port) {
        return NettyChannelBuilder.forAddress(host, port)
                .usePlaintext()
                .maxInboundMessageSize(MAX_MESSAGE_BYTES)
                .withOption(ChannelOption.TCP_NODELAY, true)
                .build();
    }

    static void close(ManagedChannel channel) {
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
