package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.ReleaseRequest;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockVllmWorker;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The HTTP operations surface ({@code docs/operations.md}) over real HTTP on the server's random port. */
@Timeout(120)
class OperationsHttpTest extends ConformanceSupport {
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final BlockPattern PATTERN = BlockPattern.perByte(31);

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HTTP.send(
                HttpRequest.newBuilder(uri(path)).timeout(WAIT).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(String path) throws IOException, InterruptedException {
        return HTTP.send(
                HttpRequest.newBuilder(uri(path))
                        .timeout(WAIT)
                        .header("X-Pega-Request", "1")
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        return URI.create("http://" + HOST + ":" + httpPort() + path);
    }

    private static JsonNode json(HttpResponse<String> response) {
        assertThat(response.headers().firstValue("content-type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("application/json"));
        return JSON.readTree(response.body());
    }

    private static List<String> strings(JsonNode array) {
        assertThat(array.isArray()).isTrue();
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asString()));
        return out;
    }

    @Test
    void shouldAnswerHealthWithPlainOk() throws Exception {
        HttpResponse<String> response = get("/health");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("ok");
        assertThat(response.headers().firstValue("content-type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
    }

    @Test
    void shouldExposePrometheusMetricsIncludingFailedRpcs() throws Exception {
        scheduler.health();
        Status failed = statusOf(() -> scheduler
                .stub()
                .release(ReleaseRequest.newBuilder()
                        .setLease(ByteString.copyFrom(new byte[2]))
                        .build()));
        assertThat(failed.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);

        HttpResponse<String> response = get("/metrics");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("content-type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
        assertThat(response.body())
                .contains("pegaflow_rpc_requests_total")
                .contains("pegaflow_pool_used_bytes")
                .contains("pegaflow_rpc_duration_seconds_bucket");
        assertThat(response.body().lines())
                .anySatisfy(line -> assertThat(line)
                        .startsWith("pegaflow_rpc_requests_total{")
                        .contains("method=\"health\"")
                        .contains("status=\"ok\""))
                .anySatisfy(line -> assertThat(line)
                        .startsWith("pegaflow_rpc_requests_total{")
                        .contains("method=\"release\"")
                        .contains("status=\"INVALID_ARGUMENT\""))
                .anySatisfy(line -> assertThat(line)
                        .startsWith("pegaflow_rpc_duration_seconds_bucket{")
                        .contains("le=\"0.001\""));
    }

    @Test
    void shouldListRegisteredInstances() throws Exception {
        assertThat(strings(json(get("/instances")).get("instances"))).isEmpty();
        try (MockVllmWorker a = refWorker("http-a").build();
                MockVllmWorker b = refWorker("http-b").build()) {
            a.register();
            b.register();

            HttpResponse<String> response = get("/instances");

            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(strings(json(response).get("instances"))).containsExactlyInAnyOrder("http-a", "http-b");
        }
    }

    @Test
    void shouldCleanUpOneInstanceById() throws Exception {
        try (MockVllmWorker a = refWorker("http-a").build();
                MockVllmWorker b = refWorker("http-b").build()) {
            a.register();
            b.register();

            HttpResponse<String> response = post("/instances/cleanup?id=http-a");

            assertThat(response.statusCode()).isEqualTo(200);
            JsonNode body = json(response);
            assertThat(strings(body.get("removed_instances"))).containsExactly("http-a");
            assertThat(body.get("removed_tensors").asInt()).isEqualTo(1);
            assertThat(engine.instanceIds()).containsExactly("http-b");
            assertThat(mappingsOf(shmOf(a))).isEqualTo(1);
            assertStatus(
                    () -> a.save(blockIds(4), BlockPattern.hashes(110, 4)),
                    Status.Code.FAILED_PRECONDITION,
                    "instance http-a not found");
        }
    }

    @Test
    void shouldAnswer404ForUnknownInstance() throws Exception {
        HttpResponse<String> response = post("/instances/cleanup?id=no-such-instance");

        assertThat(response.statusCode()).isEqualTo(404);
        assertThat(response.body()).isEqualTo("instance no-such-instance not found");
        assertThat(response.headers().firstValue("content-type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
    }

    @Test
    void shouldCleanUpAllInstancesAndTheirLeases() throws Exception {
        try (MockVllmWorker a = refWorker("http-a").build();
                MockVllmWorker b = refWorker("http-b")
                        .layer("layer_1", KvLayout.contiguous(4, 1024))
                        .build()) {
            a.register();
            b.register();
            List<ByteString> hashes = BlockPattern.hashes(111, 4);
            a.fillBlocks(blockIds(4), PATTERN);
            a.save(blockIds(4), hashes);
            awaitReady("http-a", hashes, 4, "held");

            HttpResponse<String> response = post("/instances/cleanup");

            JsonNode body = json(response);
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(strings(body.get("removed_instances"))).containsExactlyInAnyOrder("http-a", "http-b");
            assertThat(body.get("removed_tensors").asInt()).isEqualTo(3);
            assertThat(engine.instanceIds()).isEmpty();
            assertThat(engine.activeLeases()).isZero();

            JsonNode again = json(post("/instances/cleanup"));
            assertThat(strings(again.get("removed_instances"))).isEmpty();
            assertThat(again.get("removed_tensors").asInt()).isZero();
        }
    }

    @Test
    void shouldDrainTheCacheAndReportBlocksALeaseStillHolds() throws Exception {
        try (MockVllmWorker w = refWorker("http-cache").build()) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(112, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            // Two saves, so the two halves live in two pool allocations.
            w.save(blockIds(2), hashes.subList(0, 2));
            w.save(blockIds(2, 4), hashes.subList(2, 4));
            scheduler.awaitSealed("http-cache", hashes, WAIT);
            QueryReady held = scheduler.queryUntilReady("http-cache", hashes.subList(0, 2), "held", WAIT);
            assertThat(held.getNumHitBlocks()).isEqualTo(2);

            JsonNode first = json(post("/cache/memory/cleanup"));

            assertThat(first.get("evicted_blocks").asLong()).isEqualTo(4);
            assertThat(first.get("evicted_bytes").asLong()).isEqualTo(4 * 1024);
            assertThat(first.get("still_referenced_blocks").asLong()).isEqualTo(2);
            assertThat(first.get("reclaimed_bytes").asLong())
                    .as("only the unleased half was freed")
                    .isEqualTo(2 * 1024);
            assertThat(scheduler
                            .queryUntilReady("http-cache", hashes, "after", WAIT)
                            .getNumHitBlocks())
                    .isZero();

            JsonNode second = json(post("/cache/memory/cleanup"));
            assertThat(second.get("evicted_blocks").asLong()).isZero();
            assertThat(second.get("evicted_bytes").asLong()).isZero();
            assertThat(second.get("reclaimed_bytes").asLong()).isZero();
            assertThat(second.get("still_referenced_blocks").asLong()).isZero();

            // The lease still loads what it holds, then the last allocation goes back to the pool.
            w.zeroBlocks(blockIds(4));
            assertThat(w.load(held.getLease(), blockIds(2)).succeeded()).isTrue();
            w.verifyBlocks(blockIds(2), PATTERN);
            await().atMost(WAIT).until(() -> engine.pool().outstandingAllocations() == 0);
        }
    }

    @Test
    void shouldServeActuatorHealthAndPrometheus() throws Exception {
        HttpResponse<String> health = get("/actuator/health");
        HttpResponse<String> prometheus = get("/actuator/prometheus");

        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(health.body()).get("status").asString()).isEqualTo("UP");
        // Readiness includes the gRPC listener, not only the HTTP one.
        assertThat(JSON.readTree(health.body())
                        .path("components")
                        .path("grpc")
                        .path("status")
                        .asString())
                .isEqualTo("UP");
        HttpResponse<String> readiness = get("/actuator/health/readiness");
        assertThat(readiness.statusCode()).isEqualTo(200);
        assertThat(readiness.body()).contains("\"grpc\":{\"status\":\"UP\"}");
        assertThat(prometheus.statusCode()).isEqualTo(200);
        assertThat(prometheus.body()).contains("pegaflow_pool_capacity_bytes");
    }

    @Test
    void shouldNotExposeOtherActuatorEndpoints() throws Exception {
        assertThat(get("/actuator/env").statusCode()).isEqualTo(404);
        assertThat(get("/actuator/beans").statusCode()).isEqualTo(404);
    }
}
