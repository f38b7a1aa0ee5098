package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.content;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pegaflow.core.cache.AdmissionPolicy;
import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.device.host.HostDeviceBackend;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.journal.RegistrationJournal;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.agent.NanoClock;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restarting the engine on its registration journal (decision 0010) with real shm "device memory" that outlives each
 * engine, as a vLLM worker outlives a server: the restored instance serves its old id byte-exact, is detached until a
 * Session adopts it or a registration replaces it, ends on Unregister or after the idle timeout on the engine's clock,
 * and every mapping is released exactly once.
 */
@Timeout(60)
class RestoreTest {
    private static final int BLOCKS = 8;
    private static final int BLOCK_BYTES = 4096;
    private static final String LAYER = "layer_0";
    private static final Duration IDLE = Duration.ofMinutes(10);

    @TempDir
    Path state;

    private final AtomicLong nanos = new AtomicLong(TimeUnit.SECONDS.toNanos(5_000));
    private final List<TestShm> memories = new ArrayList<>();
    private Server server;

    /** One server process's worth: its journal, its engine (host backend), restored from the journal at start. */
    private final class Server implements AutoCloseable {
        final RegistrationJournal journal;
        final HostDeviceBackend backend = new HostDeviceBackend();
        final PegaEngine engine;
        final RestoreReport restore;

        Server(RegistrationLog log) {
            journal = RegistrationJournal.open(state);
            NanoClock clock = nanos::get;
            EngineConfig config = EngineConfig.defaults(PoolConfig.of(16L << 20));
            engine = PegaEngine.launch(new EngineContext()
                    .config(config)
                    .pool(PinnedMemoryPool.create(config.pool()))
                    .backend(backend)
                    .admission(AdmissionPolicy.ALWAYS)
                    .clock(clock)
                    .registrationLog(log == null ? journal : log)
                    .detachedIdleTimeout(IDLE));
            restore = engine.restore(journal.recovery().registrations());
        }

        /** Ends like a killed process, as far as the journal can tell: nothing is journaled on the way down. */
        @Override
        public void close() {
            engine.close();
            assertThat(backend.mappedObjects()).as("mappings after close").isZero();
            journal.close();
        }
    }

    private Server start() {
        server = new Server(null);
        return server;
    }

    private Server restart() {
        server.close();
        return start();
    }

    @AfterEach
    void tearDown() {
        try {
            if (server != null) {
                server.close();
            }
        } finally {
            memories.forEach(TestShm::close);
        }
    }

    private TestShm memory() {
        TestShm m = TestShm.create("pega_restoretest_", (long) BLOCKS * BLOCK_BYTES);
        memories.add(m);
        return m;
    }

    private static RegisterCommand command(String instance, TestShm memory) {
        return RegisterCommand.inProcess(
                instance,
                "restore-ns",
                0,
                1,
                1,
                0,
                1,
                0,
                List.of(LAYER),
                List.of(memory.descriptor(0, (long) BLOCKS * BLOCK_BYTES)),
                new long[] {BLOCKS},
                new long[] {BLOCK_BYTES},
                new long[] {0},
                new long[] {1},
                OptionalInt.of(ProcessUid.current()));
    }

    private static void fill(TestShm m, int[] blocks, long salt) {
        for (int b : blocks) {
            m.write((long) b * BLOCK_BYTES, content(salt + b, BLOCK_BYTES));
        }
    }

    private static void verify(TestShm m, int[] blocks, long salt) {
        for (int b : blocks) {
            assertThat(m.read((long) b * BLOCK_BYTES, BLOCK_BYTES))
                    .as("block %d", b)
                    .isEqualTo(content(salt + b, BLOCK_BYTES));
        }
    }

    private void save(String instance, int[] blocks, List<byte[]> hashes) {
        server.engine.save(instance, 0, 0, 0, List.of(new LayerSave(LAYER, blocks, hashes)));
        server.engine.flushSeals();
    }

    /** Query until ready, load the lease into {@code blocks}, release; returns the hits. */
    private long queryAndLoad(String instance, List<byte[]> hashes, int[] blocks) {
        QueryOutcome[] q = new QueryOutcome[1];
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            q[0] = server.engine.queryPrefetch(instance, hashes, "req");
            return !q[0].loading();
        });
        if (q[0].hitBlocks() == 0) {
            return 0;
        }
        try (TestShm loadState = TestShm.loadState()) {
            server.engine.load(
                    instance, 0, 0, loadState.name(), List.of(LAYER), List.of(new LeaseLoad(q[0].lease(), blocks)));
            await().atMost(Duration.ofSeconds(10)).until(() -> loadState.state() != 0);
            assertThat(loadState.state()).as("load state").isEqualTo(1);
        }
        return q[0].hitBlocks();
    }

    @Test
    void shouldServeTheOldInstanceIdAfterARestartWithoutANewRegistration() {
        TestShm m = memory();
        start().engine.registerContextBatch(command("survivor", m));
        int[] first = ids(0, 4);
        fill(m, first, 100);
        save("survivor", first, hashes(1, 4));

        Server s = restart();
        assertThat(s.restore.restored()).containsExactly("survivor");
        assertThat(s.restore.dropped()).isEmpty();
        assertThat(s.restore.layers()).isEqualTo(1);
        assertThat(s.engine.status().detachedInstanceIds()).containsExactly("survivor");
        assertThat(s.backend.mappedObjects()).isEqualTo(1);

        // The worker goes on as the reference connector does: Save, Query, Load with its old id.
        int[] second = ids(4, 8);
        fill(m, second, 200);
        save("survivor", second, hashes(2, 4));
        m.zero(0, (long) BLOCKS * BLOCK_BYTES);
        assertThat(queryAndLoad("survivor", hashes(2, 4), second)).isEqualTo(4);
        verify(m, second, 200);
        assertThat(queryAndLoad("survivor", hashes(1, 4), first))
                .as("RAM blocks of the previous process are gone")
                .isZero();
    }

    @Test
    void shouldDropAnInstanceWhoseMemoryWasUnlinkedWhileTheServerWasDown() {
        TestShm kept = memory();
        TestShm gone = memory();
        start().engine.registerContextBatch(command("kept", kept));
        server.engine.registerContextBatch(command("gone", gone));
        server.close();
        gone.close(); // the worker exited; its shm object is unlinked

        server = new Server(null);
        assertThat(server.restore.restored()).containsExactly("kept");
        assertThat(server.restore.dropped()).containsExactly("gone");
        assertThat(server.engine.instanceIds()).containsExactly("kept");
        assertThat(server.backend.mappedObjects()).isEqualTo(1);
        assertThat(server.journal.instanceIds())
                .as("the dropped instance left the journal")
                .containsExactly("kept");
        assertThatThrownBy(() -> server.engine.queryPrefetch("gone", hashes(1, 1), "r"))
                .isInstanceOf(EngineException.class)
                .hasMessageContaining("gone");
    }

    @Test
    void shouldEndADetachedInstanceAfterTheIdleTimeoutWithoutRpcs() {
        TestShm m = memory();
        start().engine.registerContextBatch(command("idle", m));
        Server s = restart();

        nanos.addAndGet(IDLE.toNanos() - 1);
        s.engine.queryPrefetch("idle", hashes(9, 1), "keeps-it-alive");
        nanos.addAndGet(IDLE.toNanos() - 1);
        s.engine.runMaintenance();
        assertThat(s.engine.instanceIds()).as("an RPC restarted the idle time").containsExactly("idle");

        nanos.addAndGet(1);
        s.engine.runMaintenance();
        assertThat(s.engine.instanceIds()).isEmpty();
        assertThat(s.engine.status().detachedCount()).isZero();
        assertThat(s.backend.mappedObjects()).as("outstanding mappings").isZero();
        assertThat(s.journal.instanceIds()).isEmpty();
        s.engine.runMaintenance(); // a second sweep finds nothing to release again
        assertThat(s.backend.mappedObjects()).isZero();

        Server again = restart();
        assertThat(again.restore.restored()).as("its end was journaled").isEmpty();
    }

    @Test
    void shouldLetANewSessionAdoptARestoredInstance() {
        TestShm m = memory();
        start().engine.registerContextBatch(command("adopted", m));
        Server s = restart();

        long token = s.engine.openSession("adopted", "restore-ns", 1, 1);
        assertThat(s.engine.status().detachedCount()).isZero();
        nanos.addAndGet(IDLE.toNanos() * 3);
        s.engine.runMaintenance();
        assertThat(s.engine.instanceIds())
                .as("no longer subject to the idle timeout")
                .containsExactly("adopted");

        s.engine.closeSession("adopted", token);
        assertThat(s.engine.instanceIds())
                .as("its Session's end ends it, as for any instance")
                .isEmpty();
        assertThat(s.backend.mappedObjects()).isZero();
        assertThat(s.journal.instanceIds()).isEmpty();
    }

    @Test
    void shouldLetANewRegistrationReplaceARestoredInstance() {
        TestShm old = memory();
        start().engine.registerContextBatch(command("replaced", old));
        Server s = restart();

        TestShm fresh = memory();
        s.engine.registerContextBatch(command("replaced", fresh));
        assertThat(s.engine.status().detachedCount()).isZero();
        assertThat(s.backend.mappedObjects())
                .as("the old mapping released, the new one held")
                .isEqualTo(1);
        int[] blocks = ids(0, 2);
        fill(fresh, blocks, 300);
        save("replaced", blocks, hashes(3, 2));
        fresh.zero(0, (long) BLOCKS * BLOCK_BYTES);
        assertThat(queryAndLoad("replaced", hashes(3, 2), blocks)).isEqualTo(2);
        verify(fresh, blocks, 300);

        Server again = restart();
        assertThat(again.restore.restored()).containsExactly("replaced");
        assertThat(again.journal.recovery().registrations()).hasSize(1);
    }

    @Test
    void shouldForgetARestoredInstanceOnUnregister() {
        TestShm m = memory();
        start().engine.registerContextBatch(command("leaving", m));
        Server s = restart();

        s.engine.unregister("leaving");
        assertThat(s.engine.status().detachedCount()).isZero();
        assertThat(s.backend.mappedObjects()).isZero();
        assertThat(restart().restore.restored()).isEmpty();
    }

    @Test
    void shouldKeepTheJournalThroughAGracefulShutdown() {
        TestShm m = memory();
        start().engine.registerContextBatch(command("upgraded", m));
        server.engine.close(); // what a SIGTERM does: every instance torn down locally

        assertThat(server.journal.instanceIds()).containsExactly("upgraded");
        assertThat(restart().restore.restored()).containsExactly("upgraded");
    }

    @Test
    void shouldKeepTheJournalWhenSessionsEndBecauseTheServerShutsDown() {
        TestShm m = memory();
        Server s = start();
        long token = s.engine.openSession("sessioned", "restore-ns", 1, 1);
        s.engine.registerContextBatch(command("sessioned", m));

        s.engine.retainRegistrations(); // the server begins to stop; its gRPC shutdown cancels every stream
        s.engine.closeSession("sessioned", token);
        assertThat(s.engine.instanceIds()).as("torn down here").isEmpty();
        assertThat(s.backend.mappedObjects()).isZero();
        assertThat(s.journal.instanceIds()).as("but kept for the next start").containsExactly("sessioned");
        assertThat(restart().restore.restored()).containsExactly("sessioned");
    }

    @Test
    void shouldRefuseARegistrationThatCannotBeJournaledAndCloseItsMappings() {
        RegistrationLog failing = new RegistrationLog() {
            @Override
            public void registered(RegisterCommand command) {
                throw new UncheckedIOException(new java.io.IOException("No space left on device"));
            }

            @Override
            public void removed(String instanceId) {}
        };
        server = new Server(failing);
        TestShm m = memory();

        assertThatThrownBy(() -> server.engine.registerContextBatch(command("unjournaled", m)))
                .isInstanceOf(EngineException.class)
                .hasMessageContaining("could not be journaled")
                .hasMessageContaining("No space left on device");
        assertThat(server.backend.mappedObjects())
                .as("the request's mappings were closed")
                .isZero();
    }
}
