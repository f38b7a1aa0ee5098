package io.pegaflow.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.testkit.MockScheduler;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;

/**
 * A real server on ephemeral ports (gRPC and HTTP), host backend, 16 MiB pool as in the reference harness. Each test
 * starts from an empty engine and must leave no instance, lease or pool allocation behind.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host"
        })
abstract class ServerTestBase {
    static final String HOST = "127.0.0.1";

    @Autowired
    GrpcPort grpcPort;

    @Autowired
    PegaEngine engine;

    @Autowired
    Environment env;

    MockScheduler scheduler;

    int port() {
        return grpcPort.port();
    }

    int httpPort() {
        return Integer.parseInt(env.getProperty("local.server.port"));
    }

    @BeforeEach
    void openScheduler() {
        engine.cleanupInstances(null);
        engine.cleanupMemory();
        scheduler = MockScheduler.connect(HOST, port());
    }

    @AfterEach
    void assertNothingOutstanding() {
        scheduler.close();
        engine.cleanupInstances(null);
        engine.flushSeals();
        engine.cleanupMemory();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(engine.activeLeases()).as("leases").isZero();
            assertThat(engine.pool().outstandingAllocations())
                    .as("pool allocations")
                    .isZero();
        });
    }
}
