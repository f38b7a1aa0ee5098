package io.pegaflow.it;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.ChildJvm;
import io.pegaflow.testkit.HybridModel;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.SessionHandle;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restarting the shipped server under workers that outlive it (decision 0010), with real processes, real shm and real
 * SSD shard files. The workers behave like the reference connector: each registers once, its scheduler opens one
 * Session, and after the server went away neither registers nor opens a Session again; they poll Health and carry on
 * with their old instance id.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RestartIT {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String NAMESPACE = "restart-ns";
    private static final KvLayout LAYOUT = KvLayout.contiguous(8, 64 * 1024);
    private static final List<String> LAYERS = List.of("layer_0", "layer_1");

    @TempDir
    Path dir;

    private int grpcPort;
    private int httpPort;
    private final List<AutoCloseable> closeLast = new ArrayList<>();

    @BeforeEach
    void ports() throws IOException {
        int[] ports = ChildJvm.freePorts(2);
        grpcPort = ports[0];
        httpPort = ports[1];
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeLast.size() - 1; i >= 0; i--) {
            closeLast.get(i).close();
        }
    }

    private <T extends AutoCloseable> T track(T resource) {
        closeLast.add(resource);
        return resource;
    }

    private Path stateDir() {
        return dir.resolve("state");
    }

    private Path journal() {
        return stateDir().resolve("registrations.journal");
    }

    private List<String> serverArgs(String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "-jar",
                System.getProperty("pega.it.serverJar"),
                "--spring.grpc.server.port=" + grpcPort,
                "--server.port=" + httpPort,
                "--server.address=127.0.0.1",
                "--pega.pool.size=32MB",
                "--pega.device.backend=host",
                "--pega.ssd.enabled=true",
                "--pega.ssd.paths=" + dir.resolve("ssd/shard.dat"),
                "--pega.ssd.capacity=64MB",
                "--pega.state.dir=" + stateDir()));
        args.addAll(List.of(extra));
        return args;
    }

    private ChildJvm start(String name, String... extra) throws IOException {
        return track(ChildJvm.start(name, dir, serverArgs(extra), ChildJvm.pegaServerReady(httpPort)));
    }

    private MockVllmWorker worker(String instance) {
        return track(MockVllmWorker.builder("127.0.0.1", grpcPort)
                .instanceId(instance)
                .namespace(NAMESPACE)
                .sharedLayers(LAYERS, LAYOUT)
                .build());
    }

    private double metric(String series) {
        String scrape = ChildJvm.httpGet(httpPort, "/actuator/prometheus");
        if (scrape == null) {
            return -1;
        }
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + "(\\{[^}]*\\})? ([0-9.eE+-]+)$")
                .matcher(scrape);
        return m.find() ? Double.parseDouble(m.group(2)) : -1;
    }

    private static void await(String what, BooleanSupplier condition, ChildJvm server) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw server.failure(what + " within " + WAIT, new AssertionError(what));
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what, e);
            }
        }
    }

    /**
     * What the reference connector does after errors: it polls Health until the server answers. grpc-java backs off
     * between reconnects (tonic reconnects on the next call), so the wait resets the backoff between polls.
     */
    private static void pollHealth(ManagedChannel channel, ChildJvm server) {
        EngineGrpc.EngineBlockingStub stub = EngineGrpc.newBlockingStub(channel);
        await(
                "the server answers Health",
                () -> {
                    try {
                        stub.withDeadlineAfter(2, TimeUnit.SECONDS).health(HealthRequest.getDefaultInstance());
                        return true;
                    } catch (StatusRuntimeException e) {
                        channel.resetConnectBackoff();
                        return false;
                    }
                },
                server);
    }

    private static long occurrences(String text, String needle) {
        return Pattern.compile(Pattern.quote(needle)).matcher(text).results().count();
    }

    @Test
    void shouldServeAWorkerThatNeverRegistersAgainAfterASigkillAndDropTheOneWhoseShmWentAway() throws Exception {
        BlockPattern before = BlockPattern.perByte(1313);
        BlockPattern after = BlockPattern.perByte(2727);
        List<ByteString> saved = BlockPattern.hashes(13, 4);
        List<ByteString> savedAfter = BlockPattern.hashes(27, 4);

        MockScheduler scheduler = track(MockScheduler.connect("127.0.0.1", grpcPort));
        MockVllmWorker survivor = worker("survivor");
        MockVllmWorker gone = worker("gone");

        ChildJvm first = start("first");
        SessionHandle session = scheduler.openSession("survivor", NAMESPACE, 1, 1);
        assertThat(session.awaitHeaders(WAIT)).isTrue();
        survivor.register();
        gone.register();
        survivor.fillBlocks(blockIds(4), before);
        survivor.save(blockIds(4), saved);
        scheduler.awaitSealed("survivor", saved, WAIT);
        await("4 blocks written to SSD", () -> metric("pegaflow_ssd_write_blocks_total") >= 4, first);

        assertThat(first.kill()).isEqualTo(137);
        assertThat(session.awaitClosed(WAIT))
                .as("the old Session stream ended with the server")
                .isPresent();
        gone.close(); // its shm is unlinked while no server runs
        // A torn last record: the bytes of a write the kill interrupted.
        Files.write(journal(), new byte[] {0, 0, 0, 42, 1, 2, 3}, StandardOpenOption.APPEND);

        ChildJvm second = start("second");
        try {
            String log = second.logText();
            assertThat(log).contains("dropped a torn or corrupt tail of 7 bytes");
            assertThat(occurrences(log, "journaled registration of instance gone dropped"))
                    .as("one line names the instance whose memory is gone")
                    .isEqualTo(1);
            assertThat(log)
                    .containsPattern(
                            "restore: 2 journaled registration\\(s\\) in .*; 1 instance\\(s\\) restored"
                                    + " detached \\[survivor\\] with 2 layer mapping\\(s\\), 1 dropped \\[gone\\], in [0-9.]+ ms");
            assertThat(log.indexOf("restore: "))
                    .as("the restore ends before the gRPC port opens")
                    .isPositive()
                    .isLessThan(log.indexOf("gRPC Server started"));
            assertThat(metric("pegaflow_restored_instances")).isEqualTo(1);
            assertThat(metric("pegaflow_restore_dropped_instances")).isEqualTo(1);
            assertThat(metric("pegaflow_detached_instances")).isEqualTo(1);
            assertThat(metric("pegaflow_restore_duration_seconds")).isPositive();
            assertThat(ChildJvm.httpGet(httpPort, "/actuator/health/readiness"))
                    .contains("\"restore\":{\"status\":\"UP\"");

            pollHealth(survivor.channel(), second);
            pollHealth(scheduler.channel(), second);

            // Warm from SSD: the RAM tier is empty after a restart.
            survivor.zeroBlocks(blockIds(4));
            QueryReady ready = scheduler.queryUntilReady("survivor", saved, "after-restart", WAIT);
            assertThat(ready.getNumHitBlocks()).isEqualTo(4);
            assertThat(survivor.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            survivor.verifyBlocks(blockIds(4), before);
            assertThat(metric("pegaflow_cache_tier_block_requests_total{tier=\"ssd\"}"))
                    .isEqualTo(4);

            // A Save with the old instance id, and the round trip of what it saved.
            survivor.fillBlocks(blockIds(4, 8), after);
            survivor.save(blockIds(4, 8), savedAfter);
            scheduler.awaitSealed("survivor", savedAfter, WAIT);
            survivor.zeroBlocks(blockIds(4, 8));
            QueryReady again = scheduler.queryUntilReady("survivor", savedAfter, "after-save", WAIT);
            assertThat(survivor.load(again.getLease(), blockIds(4, 8)).succeeded())
                    .isTrue();
            survivor.verifyBlocks(blockIds(4, 8), after);

            StatusRuntimeException unknown =
                    catchThrowableOfType(StatusRuntimeException.class, () -> scheduler.query("gone", saved, "gone"));
            assertThat(unknown.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);

            // A new Session for the restored instance adopts it; its end ends the instance, as for any other.
            SessionHandle adopting = scheduler.openSession("survivor", NAMESPACE, 1, 1);
            assertThat(adopting.awaitHeaders(WAIT)).isTrue();
            await("the restored instance is adopted", () -> metric("pegaflow_detached_instances") == 0, second);
            assertThat(second.logText()).contains("restored instance survivor adopted by a new Session");
            assertThat(metric("pegaflow_instances")).isEqualTo(1);
            adopting.close();
            await("the adopted instance ends with its Session", () -> metric("pegaflow_instances") == 0, second);
        } catch (AssertionError | RuntimeException e) {
            throw second.failure("restarted server", e);
        }
    }

    /**
     * A hybrid instance (attention plus a recurrent-state group with sparse checkpoints) survives a SIGKILL: the
     * journal restores it with its layers' groups, and the SSD gives both groups back byte-exact, each under its own
     * group keys.
     */
    @Test
    void shouldRestoreAHybridInstanceAndItsGroupsFromTheJournalAndSsd() throws Exception {
        BlockPattern pattern = BlockPattern.perByte(0x4A1B);
        List<ByteString> hashes = BlockPattern.hashes(33, HybridModel.BLOCKS);
        MockScheduler scheduler = track(MockScheduler.connect("127.0.0.1", grpcPort));
        MockVllmWorker hybrid = track(HybridModel.layers(MockVllmWorker.builder("127.0.0.1", grpcPort)
                        .instanceId("hybrid")
                        .namespace(NAMESPACE))
                .build());

        ChildJvm first = start("first");
        SessionHandle session = scheduler.openSession("hybrid", NAMESPACE, 1, 1);
        assertThat(session.awaitHeaders(WAIT)).isTrue();
        hybrid.register();
        HybridModel.saveWithCheckpoints(hybrid, hashes, pattern);
        scheduler.awaitSealed("hybrid", hashes, WAIT);
        scheduler.awaitMembers("hybrid", 1, hashes, HybridModel.CHECKPOINTS.size(), WAIT);
        await("both groups written to SSD", () -> metric("pegaflow_ssd_write_blocks_total") >= 10, first);
        assertThat(first.kill()).isEqualTo(137);
        assertThat(session.awaitClosed(WAIT)).isPresent();

        ChildJvm second = start("second");
        try {
            assertThat(metric("pegaflow_restored_instances")).isEqualTo(1);
            assertThat(ChildJvm.httpGet(httpPort, "/instances")).contains("\"hybrid\":true");
            pollHealth(hybrid.channel(), second);
            pollHealth(scheduler.channel(), second);
            hybrid.zeroBlocks(hybrid.layerNames(), HybridModel.attentionBlocks());

            QueryReady attention = scheduler.queryUntilReady("hybrid", hashes, "attention", WAIT);
            assertThat(attention.getNumHitBlocks()).isEqualTo(HybridModel.BLOCKS);
            QueryReady state =
                    scheduler.queryUntilReady("hybrid", HybridModel.checkpointHashes(hashes), "state", 1, true, WAIT);
            assertThat(state.getHitPositionsList()).containsExactly(0, 1);
            assertThat(HybridModel.loadBoth(hybrid, attention.getLease(), state.getLease(), WAIT)
                            .succeeded())
                    .isTrue();
            assertThat(HybridModel.firstMismatch(hybrid, pattern)).isEmpty();
        } catch (AssertionError | RuntimeException e) {
            throw second.failure("restarted server", e);
        }
    }

    @Test
    void shouldKeepRegistrationsThroughAGracefulRestartAndReleaseThemOnceAfterTheIdleTimeout() throws Exception {
        String[] quickIdle = {"--pega.state.detached-idle-timeout=2s", "--pega.maintenance-interval=200ms"};
        MockScheduler scheduler = track(MockScheduler.connect("127.0.0.1", grpcPort));
        MockVllmWorker idle = worker("idle");

        ChildJvm first = start("first", quickIdle);
        SessionHandle session = scheduler.openSession("idle", NAMESPACE, 1, 1);
        assertThat(session.awaitHeaders(WAIT)).isTrue();
        idle.register();
        first.stop(WAIT); // SIGTERM: the gRPC server's shutdown cancels the Session, which must not end the instance
        assertThat(first.logText()).contains("pega-server stopped");

        ChildJvm second = start("second", quickIdle);
        try {
            assertThat(metric("pegaflow_restored_instances")).isEqualTo(1);
            // No RPC for the instance: after 2 s the maintenance pass ends it and releases its mappings.
            await(
                    "the idle restored instance ends",
                    () -> metric("pegaflow_detached_instances") == 0 && metric("pegaflow_instances") == 0,
                    second);
            String log = second.logText();
            assertThat(occurrences(log, "restored instance idle ended: no Session adopted it"))
                    .isEqualTo(1);
            assertThat(log).contains("2 layer mappings released");
        } catch (AssertionError | RuntimeException e) {
            throw second.failure("restarted server", e);
        }
        second.stop(WAIT);

        ChildJvm third = start("third", quickIdle);
        assertThat(metric("pegaflow_restored_instances"))
                .as("the idle end was journaled")
                .isZero();
        third.stop(WAIT);
    }

    @Test
    void shouldRefuseAJournalOfANewerFormatWithOneLineAndLeaveItUntouched() throws Exception {
        Files.createDirectories(
                stateDir(), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        byte[] newer = ByteBuffer.allocate(16)
                .put("PGFLJRNL".getBytes(StandardCharsets.US_ASCII))
                .putInt(99)
                .putInt(0)
                .array();
        Files.write(journal(), newer);
        Files.setPosixFilePermissions(journal(), PosixFilePermissions.fromString("rw-------"));

        ChildJvm refused = ChildJvm.runToExit("newer-journal", dir, serverArgs(), Duration.ofSeconds(90));
        assertThat(refused.process().exitValue()).isNotZero();
        String log = refused.logText();
        assertThat(log)
                .containsPattern("pega-server did not start: pega\\.state\\.dir: .*state \\(expected: a registration"
                        + " journal this server can read\\).*format version 99, written by a newer pega-server");
        assertThat(log).doesNotContain("pool ready");
        assertThat(Files.readAllBytes(journal())).isEqualTo(newer);
    }
}
