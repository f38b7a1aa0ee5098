package io.pegaflow.server.ssd;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.ChildJvm;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A shard file removed under a running server: the health endpoint reports the degraded shard and why, queries keep
 * working (RAM and the other shard), nothing fails.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host",
            "pega.ssd.enabled=true",
            "pega.ssd.shard-capacity=4MB"
        })
class SsdDegradedHealthTest extends SsdServerTestBase {
    private static final Path DIR = shardDir("pega-ssd-degraded");

    @DynamicPropertySource
    static void ssdPaths(DynamicPropertyRegistry r) {
        r.add("pega.ssd.paths[0]", () -> DIR.resolve("x.dat").toString());
        r.add("pega.ssd.paths[1]", () -> DIR.resolve("y.dat").toString());
    }

    @AfterAll
    static void removeFiles() throws IOException {
        deleteShardDir(DIR);
    }

    @Test
    void shouldReportTheDegradedShardWithItsReasonAndKeepServing() throws IOException {
        int http = httpPort();
        assertThat(ChildJvm.httpGet(http, "/actuator/health")).contains("\"ssd\":{\"status\":\"UP\"");
        Files.delete(DIR.resolve("x.dat"));

        String health = ChildJvm.httpGet(http, "/actuator/health");
        assertThat(health)
                .contains("\"status\":\"UP\"") // the server as a whole still serves
                .contains("\"ssd\":{\"description\":\"shard 0 (" + DIR.resolve("x.dat") + "): file_removed")
                .contains("\"status\":\"DEGRADED\"");
        String scrape = ChildJvm.httpGet(http, "/actuator/prometheus");
        assertThat(SsdHttp.sample(scrape, "pegaflow_ssd_errors_total{kind=\"file_removed\"}"))
                .isEqualTo(1);
        assertThat(scrape)
                .contains("pegaflow_ssd_shard_healthy{path=\"" + DIR.resolve("x.dat") + "\",shard=\"0\"} 0.0");

        // Saves, spills (to the healthy shard only) and queries go on.
        List<ByteString> hashes = BlockPattern.hashes(5, 4);
        BlockPattern pattern = BlockPattern.perByte(5);
        try (MockScheduler scheduler = MockScheduler.connect("127.0.0.1", grpcPort.port());
                MockVllmWorker w = MockVllmWorker.builder("127.0.0.1", grpcPort.port())
                        .instanceId("degraded")
                        .layer("layer_0", KvLayout.contiguous(4, 1024))
                        .build()) {
            w.register();
            w.fillBlocks(blockIds(4), pattern);
            w.save(blockIds(4), hashes);
            engine.flushSeals();
            store.flush().join();
            engine.cleanupMemory();
            w.zeroBlocks(blockIds(4));
            QueryReady ready = scheduler.queryUntilReady(w.instanceId(), hashes, "req", Duration.ofSeconds(10));
            assertThat(ready.getNumHitBlocks()).isEqualTo(4);
            assertThat(w.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            w.verifyBlocks(blockIds(4), pattern);
            w.unregister();
        }
        assertThat(store.shardStatus().get(1).entries()).isEqualTo(4);
    }
}
