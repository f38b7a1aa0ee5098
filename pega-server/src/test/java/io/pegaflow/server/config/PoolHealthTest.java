package io.pegaflow.server.config;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.StatusRuntimeException;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;

/**
 * Health tells the truth about a pinned pool: a tenant fills the 16 MiB pool and holds every block under a lease, so
 * another tenant's Save cannot get memory. The {@code pool} component of {@code /actuator/health} is DEGRADED with the
 * reason and {@code /health} says so, while readiness stays UP (the server answers; taking it out of rotation would
 * strand its clients' leases). Once the lease is released the next Save succeeds and health is UP again. Before, only
 * {@code pegaflow_pool_alloc_failures} moved and health stayed {@code ok}.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host"
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PoolHealthTest {
    static final String HOST = "127.0.0.1";
    static final Duration WAIT = Duration.ofSeconds(20);
    static final long MIB = 1L << 20;
    static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Autowired
    GrpcPort port;

    @Autowired
    PegaEngine engine;

    @LocalServerPort
    int httpPort;

    HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create("http://" + HOST + ":" + httpPort + path))
                        .timeout(WAIT)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldReportADegradedPoolWhileNoSaveCanAllocateAndStayReady() throws Exception {
        List<ByteString> held = BlockPattern.hashes(5001, 16);
        List<ByteString> other = BlockPattern.hashes(5002, 4);
        try (MockScheduler s = MockScheduler.connect(HOST, port.port());
                MockVllmWorker holder = worker("pool-holder", 16);
                MockVllmWorker victim = worker("pool-victim", 4)) {
            holder.register();
            victim.register();
            holder.fillBlocks(blockIds(16), BlockPattern.perByte(5001));
            holder.save(blockIds(8), held.subList(0, 8));
            holder.save(blockIds(8, 16), held.subList(8, 16));
            s.awaitSealed(holder.instanceId(), held, WAIT);
            QueryReady lease = s.queryUntilReady(holder.instanceId(), held, "hold-all", WAIT);
            assertThat(lease.getNumHitBlocks()).isEqualTo(16);
            assertThat(get("/health").body()).isEqualTo("ok");

            victim.fillBlocks(blockIds(4), BlockPattern.perByte(5002));
            boolean saved;
            try {
                saved = victim.save(blockIds(4), other).getStatus().getOk();
            } catch (StatusRuntimeException e) {
                saved = false;
            }
            assertThat(saved).as("no memory for the victim's Save").isFalse();

            HttpResponse<String> actuator = get("/actuator/health");
            assertThat(actuator.body()).containsPattern("\"pool\":\\{[^}]*\"status\":\"DEGRADED\"");
            assertThat(get("/actuator/health/readiness").statusCode()).isEqualTo(200);
            assertThat(get("/health").body()).startsWith("degraded: pool: ");

            s.release(lease.getLease());
            assertThat(victim.save(blockIds(4), other).getStatus().getOk()).isTrue();
            assertThat(get("/health").body()).isEqualTo("ok");
            assertThat(get("/actuator/health").body()).containsPattern("\"pool\":\\{[^}]*\"status\":\"UP\"");
            holder.unregister();
            victim.unregister();
        }
    }

    MockVllmWorker worker(String id, int blocks) {
        return MockVllmWorker.builder(HOST, port.port())
                .instanceId(id)
                .namespace("ns-pool-health")
                .layer("layer_0", KvLayout.contiguous(blocks, MIB))
                .build();
    }
}
