package io.pegaflow.server.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.proto.UnregisterRequest;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.testkit.ChildJvm;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;

/**
 * A worker process SIGKILLed mid-Save and mid-Load (decision 0016 §3): the worker runs as its own JVM
 * ({@link FaultWorkerMain}) in a tight Save or Load loop and is killed at a point the test does not choose. Afterwards
 * every batch the server acknowledged loads back byte for byte into another instance, a batch in flight is either all
 * there and exact or absent, health is UP, and once the dead worker's instance is removed the engine holds no mapping,
 * lease or pool allocation of it.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host"
        })
class WorkerKillTest {
    private static final Pattern ACK = Pattern.compile("(?m)^ACK (\\d+)$");
    private static final Pattern LOADED = Pattern.compile("(?m)^LOADED (\\d+)$");

    @Autowired
    GrpcPort grpcPort;

    @Autowired
    PegaEngine engine;

    @Autowired
    Environment env;

    @TempDir
    Path dir;

    private static final Pattern SHM = Pattern.compile("(?m)^SHM (pega_[A-Za-z0-9_]+)$");
    /** The dead workers' own objects, named by them as they made them. */
    private final Set<String> deadWorkersShm = new HashSet<>();

    @AfterEach
    void nothingOutstanding() {
        engine.cleanupInstances(null);
        engine.flushSeals();
        engine.cleanupMemory();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(engine.activeLeases()).as("leases").isZero();
            assertThat(engine.pool().outstandingAllocations())
                    .as("pool allocations")
                    .isZero();
            assertThat(engine.mappedObjectCount()).as("mappings").isZero();
        });
        removeShmObjectsOfTheDeadWorker();
    }

    @Test
    void shouldKeepEveryAcknowledgedSaveWhenTheWorkerIsKilledMidSave() throws Exception {
        for (int round = 0; round < 2; round++) {
            String id = "killed-saver-" + round;
            int acked;
            try (ChildJvm worker = startWorker(id, "save")) {
                int killAfter = 3 + round * 7;
                await().atMost(Duration.ofSeconds(60)).until(() -> last(ACK, worker.logText()) >= killAfter);
                assertThat(worker.kill()).isEqualTo(137);
                acked = last(ACK, worker.logText());
                noteShm(worker.logText());
            }
            assertThat(acked).isLessThan(FaultWorkers.BATCHES - 1); // killed mid-loop, not after it

            try (MockScheduler scheduler = MockScheduler.connect("127.0.0.1", grpcPort.port());
                    MockVllmWorker verifier = FaultWorkers.worker(grpcPort.port(), "verifier-" + round)
                            .build()) {
                verifier.register();
                for (int b = 0; b <= acked; b++) {
                    var ready = scheduler.queryUntilReady(
                            verifier.instanceId(), FaultWorkers.hashes(b), "v" + b, Duration.ofSeconds(20));
                    assertThat(ready.getNumHitBlocks())
                            .as("acknowledged batch %d", b)
                            .isEqualTo(4);
                    verifier.zeroBlocks(FaultWorkers.ids(b));
                    assertThat(verifier.load(ready.getLease(), FaultWorkers.ids(b))
                                    .succeeded())
                            .isTrue();
                    verifier.verifyBlocks(FaultWorkers.ids(b), FaultWorkers.pattern(b));
                }
                // the batch in flight at the kill: a prefix of it may be there, and what is there is exact
                int inFlight = acked + 1;
                var ready = scheduler.queryUntilReady(
                        verifier.instanceId(), FaultWorkers.hashes(inFlight), "inflight", Duration.ofSeconds(20));
                int hits = (int) ready.getNumHitBlocks();
                if (hits > 0) {
                    List<Integer> ids = FaultWorkers.ids(inFlight).subList(0, hits);
                    verifier.zeroBlocks(ids);
                    assertThat(verifier.load(ready.getLease(), ids).succeeded()).isTrue();
                    verifier.verifyBlocks(ids, FaultWorkers.pattern(inFlight));
                } else if (!ready.getLease().isEmpty()) {
                    scheduler.release(ready.getLease());
                }
                assertThat(scheduler.health().getStatus().getOk()).isTrue();
                assertThat(ChildJvm.httpGet(httpPort(), "/actuator/health")).contains("\"status\":\"UP\"");
                unregister(scheduler, id);
                verifier.unregister();
            }
        }
    }

    @Test
    void shouldReleaseEverythingOfAWorkerKilledMidLoad() throws Exception {
        String id = "killed-loader";
        try (ChildJvm worker = startWorker(id, "load")) {
            await().atMost(Duration.ofSeconds(60)).until(() -> last(LOADED, worker.logText()) >= 5);
            assertThat(worker.kill()).isEqualTo(137);
            noteShm(worker.logText());
        }
        try (MockScheduler scheduler = MockScheduler.connect("127.0.0.1", grpcPort.port());
                MockVllmWorker verifier =
                        FaultWorkers.worker(grpcPort.port(), "verifier-load").build()) {
            verifier.register();
            var ready = scheduler.queryUntilReady(
                    verifier.instanceId(), FaultWorkers.hashes(0), "v", Duration.ofSeconds(20));
            assertThat(ready.getNumHitBlocks()).isEqualTo(4);
            assertThat(verifier.load(ready.getLease(), FaultWorkers.ids(0)).succeeded())
                    .isTrue();
            verifier.verifyBlocks(FaultWorkers.ids(0), FaultWorkers.pattern(0));
            assertThat(ChildJvm.httpGet(httpPort(), "/actuator/health")).contains("\"status\":\"UP\"");
            unregister(scheduler, id);
            verifier.unregister();
        }
        // the dead loader's leases end with its instance: nothing of it stays pinned
        engine.cleanupMemory();
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> assertThat(engine.activeLeases()).isZero());
    }

    private ChildJvm startWorker(String id, String mode) throws IOException {
        return ChildJvm.start(
                "worker " + id,
                dir,
                List.of(
                        "-cp",
                        System.getProperty("java.class.path"),
                        FaultWorkerMain.class.getName(),
                        Integer.toString(grpcPort.port()),
                        id,
                        mode),
                () -> true);
    }

    private static void unregister(MockScheduler scheduler, String id) {
        scheduler
                .stub()
                .withDeadlineAfter(20, TimeUnit.SECONDS)
                .unregisterContext(
                        UnregisterRequest.newBuilder().setInstanceId(id).build());
    }

    private int httpPort() {
        return Integer.parseInt(env.getProperty("local.server.port"));
    }

    private static int last(Pattern p, String log) {
        Matcher m = p.matcher(log);
        int last = -1;
        while (m.find()) {
            last = Integer.parseInt(m.group(1));
        }
        return last;
    }

    private void noteShm(String log) {
        Matcher m = SHM.matcher(log);
        while (m.find()) {
            deadWorkersShm.add(m.group(1));
        }
    }

    /** A killed process cannot unlink its own objects; the test does it for it, as its supervisor would. */
    private void removeShmObjectsOfTheDeadWorker() {
        for (String name : deadWorkersShm) {
            try {
                Files.deleteIfExists(Path.of("/dev/shm", name));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
