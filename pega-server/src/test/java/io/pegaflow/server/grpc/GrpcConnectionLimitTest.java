package io.pegaflow.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;

/**
 * {@code pega.grpc.max-connections} (decision 0031 §4), against the real listener: three connections held open and in
 * use, a fourth is closed as it is accepted (its call fails UNAVAILABLE) and counted; the three keep working, and once
 * one of them closes a new connection gets through.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host",
            "pega.grpc.max-connections=3"
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GrpcConnectionLimitTest {

    @Autowired
    GrpcPort port;

    @Autowired
    ConnectionLimit limit;

    @Autowired
    MeterRegistry registry;

    final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void close() throws InterruptedException {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private ManagedChannel connect() {
        ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", port.port())
                .usePlaintext()
                .build();
        channels.add(c);
        return c;
    }

    private static boolean healthy(ManagedChannel c) {
        return EngineGrpc.newBlockingStub(c)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .health(HealthRequest.getDefaultInstance())
                .getStatus()
                .getOk();
    }

    @Test
    void shouldCloseConnectionsPastTheBoundAtAccept() throws InterruptedException {
        List<ManagedChannel> held = List.of(connect(), connect(), connect());
        for (ManagedChannel c : held) {
            assertThat(healthy(c)).isTrue();
        }
        assertThat(limit.open()).isEqualTo(3);
        long refusedBefore = limit.refused();

        ManagedChannel fourth = connect();
        assertThatThrownBy(() -> healthy(fourth))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        assertThat(limit.refused()).isGreaterThan(refusedBefore);
        assertThat(registry.get("pegaflow_grpc_connections_refused")
                        .functionCounter()
                        .count())
                .isGreaterThanOrEqualTo(1.0);
        for (ManagedChannel c : held) {
            assertThat(healthy(c)).as("the admitted connections keep working").isTrue();
        }

        held.get(0).shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(10)).until(() -> limit.open() == 2);
        assertThat(healthy(connect())).as("a slot freed by a close").isTrue();
        assertThat(registry.get("pegaflow_grpc_connections").gauge().value()).isEqualTo(3.0);
    }
}
