package io.pegaflow.server.ssd;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.ChildJvm;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * SSD shards on real filesystems (two ext4 loop mounts, one shard each) under load (decision 0016 §3). First the
 * filesystem of shard 0 fills up to the last block: a shard is preallocated at start, so nothing changes — spills go
 * on and come back byte for byte. Then that filesystem goes down (every I/O fails with EIO, as on a dead drive) while
 * saves and spills run: shard 0 leaves service with its reason in the health, shard 1 and RAM keep serving, every
 * Load is byte-exact, and when the load stops nothing of the pool is outstanding.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@EnabledIf(value = "io.pegaflow.server.ssd.LoopFilesystem#available", disabledReason = "needs root and loop mounts")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@DirtiesContext
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host",
            "pega.ssd.enabled=true",
            "pega.ssd.shard-capacity=8MB",
            "pega.ssd.free-space-margin=0"
        })
class SsdRealFilesystemFaultTest extends SsdServerTestBase {
    private static final KvLayout LAYOUT = KvLayout.contiguous(16, 64 * 1024);
    private static LoopFilesystem first;
    private static LoopFilesystem second;

    @DynamicPropertySource
    static void ssdPaths(DynamicPropertyRegistry r) {
        try {
            first = LoopFilesystem.create("pega-ssd-real-0", 24, false);
            second = LoopFilesystem.create("pega-ssd-real-1", 24, false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        r.add("pega.ssd.paths[0]", () -> first.mount().resolve("shard-0.dat").toString());
        r.add("pega.ssd.paths[1]", () -> second.mount().resolve("shard-1.dat").toString());
    }

    @AfterAll
    static void unmount() throws IOException {
        try {
            if (first != null) {
                first.close();
            }
        } finally {
            if (second != null) {
                second.close();
            }
        }
    }

    private MockVllmWorker worker(String id) {
        return MockVllmWorker.builder("127.0.0.1", grpcPort.port())
                .instanceId(id)
                .layer("layer_0", LAYOUT)
                .build();
    }

    /** Saves {@code rounds} batches of 16 blocks, spills them, drops RAM and loads each back byte for byte. */
    private void saveSpillAndLoadBack(MockVllmWorker w, MockScheduler scheduler, int seed, int rounds) {
        for (int r = 0; r < rounds; r++) {
            List<ByteString> hashes = BlockPattern.hashes(seed + r * 100, 16);
            BlockPattern pattern = BlockPattern.perByte(seed + r);
            w.fillBlocks(blockIds(16), pattern);
            w.save(blockIds(16), hashes);
            engine.flushSeals();
            store.flush().orTimeout(30, TimeUnit.SECONDS).join();
            engine.cleanupMemory();
            w.zeroBlocks(blockIds(16));
            var ready = scheduler.queryUntilReady(w.instanceId(), hashes, "r" + seed + r, Duration.ofSeconds(20));
            int hits = (int) ready.getNumHitBlocks();
            if (hits > 0) {
                assertThat(w.load(ready.getLease(), blockIds(hits)).succeeded()).isTrue();
                w.verifyBlocks(blockIds(hits), pattern);
            } else if (!ready.getLease().isEmpty()) {
                scheduler.release(ready.getLease());
            }
        }
    }

    @Test
    @Order(1)
    void shouldKeepSpillingToAPreallocatedShardWhenItsFilesystemIsFull() throws Exception {
        long filled = first.fill();
        assertThat(filled).as("the filesystem had room left to fill").isPositive();
        long entriesBefore = store.shardStatus().get(0).entries();
        try (MockScheduler scheduler = MockScheduler.connect("127.0.0.1", grpcPort.port());
                MockVllmWorker w = worker("full")) {
            w.register();
            saveSpillAndLoadBack(w, scheduler, 100, 4);
            w.unregister();
        }
        assertThat(store.shardStatus().get(0).entries()).isGreaterThan(entriesBefore);
        assertThat(ChildJvm.httpGet(httpPort(), "/actuator/health")).contains("\"ssd\":{\"status\":\"UP\"");
    }

    @Test
    @Order(2)
    void shouldTakeADeadFilesystemsShardOutOfServiceUnderLoadAndServeEveryByteRight() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger rounds = new AtomicInteger();
        Thread load = new Thread(() -> {
            try (MockScheduler scheduler = MockScheduler.connect("127.0.0.1", grpcPort.port());
                    MockVllmWorker w = worker("dying-disk")) {
                w.register();
                for (int r = 0; !stop.get() && r < 200; r++) {
                    saveSpillAndLoadBack(w, scheduler, 10_000 + r * 17, 1);
                    rounds.incrementAndGet();
                }
                w.unregister();
            }
        });
        java.util.concurrent.atomic.AtomicReference<Throwable> failure =
                new java.util.concurrent.atomic.AtomicReference<>();
        load.setUncaughtExceptionHandler((t, e) -> failure.set(e));
        load.start();
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> rounds.get() >= 2 || failure.get() != null);
            first.shutDown();
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> !store.shardStatus().get(0).healthy() || failure.get() != null);
            int atFault = rounds.get();
            await().atMost(Duration.ofSeconds(60)).until(() -> rounds.get() >= atFault + 3 || failure.get() != null);
        } finally {
            stop.set(true);
            load.join(60_000);
        }
        assertThat(failure.get()).as("the loading client").isNull();
        String health = ChildJvm.httpGet(httpPort(), "/actuator/health");
        assertThat(health)
                .contains("\"status\":\"UP\"")
                .contains("shard 0 (" + first.mount().resolve("shard-0.dat") + "): io_error")
                .contains("\"status\":\"DEGRADED\"");
        assertThat(store.shardStatus().get(1).healthy()).isTrue();
        engine.cleanupInstances(null);
        engine.flushSeals();
        engine.cleanupMemory();
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(
                        () -> assertThat(engine.pool().outstandingAllocations()).isZero());
    }
}
