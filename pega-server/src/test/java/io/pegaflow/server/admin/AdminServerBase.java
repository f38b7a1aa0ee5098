package io.pegaflow.server.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.testkit.MockScheduler;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One real server (host backend, 16 MiB pool) for the admin API and dashboard tests: the HTTP listener on all
 * interfaces with an admin token, as in a pod, so a browser on 127.0.0.1 is refused mutations without the token. Every
 * class extending this runs against the one cached context; each test starts from an empty engine.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=0.0.0.0",
            "pega.admin.token=" + AdminServerBase.TOKEN,
            "pega.pool.size=16MB",
            "pega.device.backend=host"
        })
abstract class AdminServerBase {
    static final String HOST = "127.0.0.1";
    static final String TOKEN = "dashboard-test-token";
    static final Duration WAIT = Duration.ofSeconds(10);
    static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    GrpcPort grpcPort;

    @Autowired
    PegaEngine engine;

    @Autowired
    ThroughputHistory history;

    @Autowired
    Environment env;

    MockScheduler scheduler;

    int grpcPort() {
        return grpcPort.port();
    }

    int httpPort() {
        return Integer.parseInt(env.getProperty("local.server.port"));
    }

    String base() {
        return "http://" + HOST + ":" + httpPort();
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create(base() + path))
                        .timeout(WAIT)
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    JsonNode json(String path) throws IOException, InterruptedException {
        HttpResponse<String> response = get(path);
        assertThat(response.statusCode())
                .as("GET %s: %s", path, response.body())
                .isEqualTo(200);
        assertThat(response.headers().firstValue("content-type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("application/json"));
        return JSON.readTree(response.body());
    }

    @BeforeEach
    void openScheduler() {
        engine.cleanupInstances(null);
        engine.cleanupMemory();
        scheduler = MockScheduler.connect(HOST, grpcPort());
    }

    @AfterEach
    void assertNothingOutstanding() {
        scheduler.close();
        engine.cleanupInstances(null);
        engine.flushSeals();
        engine.cleanupMemory();
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(engine.activeLeases()).as("leases").isZero();
            assertThat(engine.pool().outstandingAllocations())
                    .as("pool allocations")
                    .isZero();
        });
    }
}
