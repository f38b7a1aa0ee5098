package io.pegaflow.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The event loops {@link ConnectionLimit} starts for the listener are its own: once the server stopped and the limit
 * closed, none of their threads is left, whatever connections they served.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConnectionLimitThreadsTest {

    private static final int CONNECTIONS = 4;

    /** The limit's accept and I/O threads (named by their thread factories) alive now. */
    private static Set<Thread> limitThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .filter(t -> t.getName().startsWith("pega-grpc-accept-")
                        || t.getName().startsWith("pega-grpc-io-"))
                .collect(Collectors.toSet());
    }

    @Test
    void shouldLeaveNoThreadOfItsOwnAfterClose() throws Exception {
        // Other tests of this JVM may hold limits of their own (a cached Spring context): only ours are judged.
        Set<Thread> before = limitThreads();
        ConnectionLimit limit = new ConnectionLimit(CONNECTIONS, NanoClock.SYSTEM);
        NettyServerBuilder builder =
                NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        limit.applyTo(builder);
        Server server = builder.build().start();
        List<ManagedChannel> channels = new ArrayList<>();
        try {
            for (int i = 0; i < CONNECTIONS; i++) {
                ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                        .usePlaintext()
                        .build();
                channels.add(c);
                // No service is bound: UNIMPLEMENTED proves the connection was accepted and served by the loops.
                assertThatThrownBy(() -> EngineGrpc.newBlockingStub(c)
                                .withDeadlineAfter(10, TimeUnit.SECONDS)
                                .health(HealthRequest.getDefaultInstance()))
                        .isInstanceOfSatisfying(
                                StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
            }
            assertThat(limit.open()).isEqualTo(CONNECTIONS);
            Set<Thread> ours = limitThreads();
            ours.removeAll(before);
            assertThat(ours)
                    .as("the limit's accept and I/O threads while it serves")
                    .isNotEmpty();
        } finally {
            for (ManagedChannel c : channels) {
                c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            limit.close();
        }

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            Set<Thread> left = limitThreads();
            left.removeAll(before);
            assertThat(left).as("threads of the closed limit").isEmpty();
        });
    }
}
