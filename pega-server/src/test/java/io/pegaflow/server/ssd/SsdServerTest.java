package io.pegaflow.server.ssd;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.core.ssd.SsdBackingTier;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.ChildJvm;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The SSD tier wired into a real server (host backend): properties, host alignment, spill, prefetch over gRPC with
 * a byte-exact load, health and metrics.
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
            "pega.ssd.capacity=16MB",
            "pega.ssd.write-inflight=3",
            "pega.ssd.max-prefetch-blocks=64"
        })
class SsdServerTest extends SsdServerTestBase {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Path DIR = shardDir("pega-ssd-server");

    @Autowired
    BackingTier tier;

    @DynamicPropertySource
    static void ssdPaths(DynamicPropertyRegistry r) {
        r.add("pega.ssd.paths[0]", () -> DIR.resolve("a").toString());
        r.add("pega.ssd.paths[1]", () -> DIR.resolve("b").toString());
    }

    @AfterAll
    static void removeFiles() throws IOException {
        deleteShardDir(DIR);
    }

    @Test
    void shouldWireTheTierWith512ByteHostAlignment() {
        assertThat(tier).isInstanceOf(SsdBackingTier.class);
        assertThat(((SsdBackingTier) tier).maxPrefetchBlocks()).isEqualTo(64);
        assertThat(engine.config().hostAlignmentBytes()).isEqualTo(512);
        assertThat(store.config().writeInflight()).isEqualTo(3);
        assertThat(store.config().shardCapacityBytes()).isEqualTo(8L << 20);
        assertThat(store.shardStatus())
                .extracting(s -> s.path())
                .containsExactly(DIR.resolve("a").toString(), DIR.resolve("b").toString());
        assertThat(DIR.resolve("a")).hasSize(4096 + (8L << 20));
    }

    @Test
    void shouldLoadByteExactFromSsdOverGrpcAfterRamCleanup() {
        BlockPattern pattern = BlockPattern.perByte(77);
        List<ByteString> hashes = BlockPattern.hashes(77, 4);
        try (MockScheduler scheduler = MockScheduler.connect("127.0.0.1", grpcPort.port());
                MockVllmWorker w = MockVllmWorker.builder("127.0.0.1", grpcPort.port())
                        .instanceId("ssd-server")
                        .namespace("ssd-ns")
                        .layer("layer_0", KvLayout.contiguous(4, 1000)) // padded to 1024 on the host
                        .layer("layer_1", KvLayout.contiguous(4, 1000))
                        .build()) {
            scheduler.openSession(w.instanceId(), w.namespace(), 1, 1);
            w.register();
            w.fillBlocks(blockIds(4), pattern);
            w.save(blockIds(4), hashes);
            engine.flushSeals();
            SsdStoreFlush.await(store);
            assertThat(engine.cleanupMemory().evictedBlocks()).isEqualTo(4);
            w.zeroBlocks(blockIds(4));

            QueryReady ready = scheduler.queryUntilReady(w.instanceId(), hashes, "req", WAIT);
            assertThat(ready.getNumHitBlocks()).isEqualTo(4);
            assertThat(w.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            w.verifyBlocks(blockIds(4), pattern);
            assertThat(engine.metrics().tierRequests("ssd")).isGreaterThanOrEqualTo(4);
            w.unregister();
        }

        String scrape = ChildJvm.httpGet(httpPort(), "/actuator/prometheus");
        assertThat(SsdHttp.sample(scrape, "pegaflow_ssd_write_blocks_total")).isGreaterThanOrEqualTo(4);
        assertThat(SsdHttp.sample(scrape, "pegaflow_ssd_prefetch_success_total"))
                .isGreaterThanOrEqualTo(4);
        assertThat(SsdHttp.sample(scrape, "pegaflow_ssd_shard_capacity_bytes")).isEqualTo(8 << 20);
        assertThat(scrape)
                .contains("pegaflow_ssd_shard_used_bytes{path=")
                .contains("pegaflow_ssd_shard_written_bytes_total{")
                .contains("pegaflow_ssd_shard_read_bytes_total{")
                .contains("pegaflow_ssd_errors_total{kind=\"no_space\"}")
                .contains("pegaflow_ssd_write_queue_pending")
                .contains("pegaflow_ssd_prefetch_queue_pending")
                .contains("pegaflow_ssd_prefetch_duration_seconds_bucket")
                .contains("pegaflow_cache_tier_block_requests_total{tier=\"ssd\"}");
        String health = ChildJvm.httpGet(httpPort(), "/actuator/health");
        assertThat(health).contains("\"ssd\":{\"status\":\"UP\"");
    }

    /** Waits for the store's write barrier. */
    static final class SsdStoreFlush {
        static void await(SsdStore store) {
            try {
                store.flush().get(20, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
    }
}
