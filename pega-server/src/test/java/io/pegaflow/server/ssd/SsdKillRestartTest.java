package io.pegaflow.server.ssd;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.server.ChildServer;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Persistence across a crash: a server started as a child process spills blocks to SSD, is killed with SIGKILL while
 * it is writing more, and a new server on the same shard file serves the earlier blocks from SSD, byte-exact, to a new
 * instance of the same model (namespace).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SsdKillRestartTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final KvLayout LAYOUT = KvLayout.contiguous(8, 64 * 1024);
    private static final List<String> LAYERS = List.of("layer_0", "layer_1");

    @TempDir
    Path dir;

    private ChildServer start(String name) throws IOException {
        return ChildServer.start(
                name,
                dir,
                "--server.address=127.0.0.1",
                "--pega.ssd.enabled=true",
                "--pega.ssd.paths=" + dir.resolve("shard.dat"),
                "--pega.ssd.capacity=64MB",
                "--logging.level.io.pegaflow.core.ssd=INFO");
    }

    private static double metric(ChildServer s, String name) {
        return SsdHttp.sample(ChildJvm.httpGet(s.httpPort(), "/actuator/prometheus"), name);
    }

    private static MockVllmWorker worker(ChildServer s, String instance) {
        MockVllmWorker.Builder b = MockVllmWorker.builder("127.0.0.1", s.grpcPort())
                .instanceId(instance)
                .namespace("kill-ns");
        return b.sharedLayers(LAYERS, LAYOUT).build();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void shouldServeBlocksFromSsdByteExactAfterAKillNineMidWrite() throws Exception {
        BlockPattern pattern = BlockPattern.perByte(4242);
        List<ByteString> kept = BlockPattern.hashes(42, 4);

        try (ChildServer first = start("first");
                MockVllmWorker w = worker(first, "before-crash")) {
            w.register();
            w.fillBlocks(blockIds(4), pattern);
            w.save(blockIds(4), kept);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (metric(first, "pegaflow_ssd_write_blocks_total") < 4) {
                assertThat(System.nanoTime()).as("blocks reach SSD").isLessThan(deadline);
                sleep(20);
            }

            // Keep the writer busy with fresh blocks, then kill the process in the middle of it.
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger batches = new AtomicInteger();
            Thread churn = new Thread(() -> {
                for (int salt = 1000; !stop.get(); salt++) {
                    try {
                        w.save(blockIds(4, 8), BlockPattern.hashes(salt, 4));
                        batches.incrementAndGet();
                    } catch (RuntimeException e) {
                        return; // the server is gone
                    }
                }
            });
            churn.start();
            deadline = System.nanoTime() + WAIT.toNanos();
            while (batches.get() < 20 || metric(first, "pegaflow_ssd_write_blocks_total") < 40) {
                assertThat(System.nanoTime()).as("churn reaches SSD").isLessThan(deadline);
                sleep(10);
            }
            first.process().destroyForcibly(); // SIGKILL
            assertThat(first.process().waitFor(20, TimeUnit.SECONDS)).isTrue();
            assertThat(first.process().exitValue()).isEqualTo(137);
            stop.set(true);
            churn.join(10_000);
        }

        try (ChildServer second = start("second")) {
            try {
                assertRecoveredAndServedFromSsd(second, kept, pattern);
            } catch (AssertionError | RuntimeException e) {
                throw second.failure("restarted server failed", e);
            }
            second.process().destroy();
            assertThat(second.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    private static void assertRecoveredAndServedFromSsd(ChildServer second, List<ByteString> kept, BlockPattern pattern)
            throws IOException {
        assertThat(metric(second, "pegaflow_ssd_recovered_entries_total")).isGreaterThanOrEqualTo(44);
        try (MockScheduler scheduler = MockScheduler.connect("127.0.0.1", second.grpcPort());
                MockVllmWorker w = worker(second, "after-crash")) {
            w.register();
            w.zeroBlocks(blockIds(4));
            QueryReady ready = scheduler.queryUntilReady(w.instanceId(), kept, "after-restart", WAIT);
            assertThat(ready.getNumHitBlocks()).isEqualTo(4);
            assertThat(w.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            w.verifyBlocks(blockIds(4), pattern);
        }
        assertThat(metric(second, "pegaflow_cache_tier_block_requests_total{tier=\"ssd\"}"))
                .isEqualTo(4);
        assertThat(Files.readString(second.log())).contains("recovered");
    }
}
