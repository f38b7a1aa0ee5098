package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.cache.AdmissionPolicy;
import io.pegaflow.core.cache.BlockCache;
import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.metrics.EngineMetrics;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.AgentRunner;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The engine's threads are agents that report to one group, and every wait of a Save has a deadline: a copy that
 * does not finish in time fails the Save with DEADLINE_EXCEEDED without losing or corrupting memory, and a full or
 * stopped sealing queue refuses the Save with a clear status instead of queuing it to leak (review E3).
 */
@Timeout(60)
class EngineAgentsTest {
    private static final int BLOCK_BYTES = 4096;

    /** Save copies wait for {@code gate} (a GPU copy stuck behind a hung kernel). */
    private static HookedHostBackend.CopyHook gatedSaves(CountDownLatch gate) {
        return (plan, toHost) -> {
            if (toHost) {
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
    }

    @Test
    void shouldRunEveryEngineThreadAsAnAgentOfTheGivenGroup() {
        AgentGroup agents = new AgentGroup();
        try (EngineHarness harness =
                new EngineHarness(EngineConfig.defaults(PoolConfig.of(1 << 20)), List.of(), agents)) {
            assertThat(agents.statuses())
                    .extracting(AgentGroup.Status::roleName)
                    .containsExactlyInAnyOrder("pega-seal", "pega-gc");
            harness.worker("inst", 4, BLOCK_BYTES).register();
            assertThat(agents.statuses())
                    .extracting(AgentGroup.Status::roleName)
                    .contains("pega-inst-dev0-save", "pega-inst-dev0-load");
            assertThat(agents.statuses()).allSatisfy(s -> assertThat(s.state()).isEqualTo(AgentRunner.State.RUNNING));
            harness.engine.unregister("inst");
            assertThat(agents.statuses())
                    .extracting(AgentGroup.Status::roleName)
                    .containsExactlyInAnyOrder("pega-seal", "pega-gc");
        }
        assertThat(agents.statuses())
                .as("a closed engine leaves no agent behind")
                .isEmpty();
    }

    @Test
    void shouldFailASaveWhoseCopyOutlivesTheDeadlineAndGiveItsMemoryBackAfterwards() {
        CountDownLatch gate = new CountDownLatch(1);
        HookedHostBackend backend = new HookedHostBackend(gatedSaves(gate));
        EngineConfig config = EngineConfig.defaults(PoolConfig.of(1 << 20)).withSaveDeadline(Duration.ofMillis(200));
        PinnedMemoryPool pool = PinnedMemoryPool.create(config.pool());
        try (PegaEngine engine = PegaEngine.launch(
                        new EngineContext().config(config).pool(pool).backend(backend));
                TestShm device = TestShm.create("pega_deadline_", 4L * BLOCK_BYTES)) {
            engine.registerContextBatch(RegisterCommand.inProcess(
                    "inst",
                    "ns",
                    0,
                    1,
                    1,
                    0,
                    1,
                    0,
                    List.of(EngineHarness.LAYER),
                    List.of(device.descriptor(0, 4L * BLOCK_BYTES)),
                    new long[] {4},
                    new long[] {BLOCK_BYTES},
                    new long[] {0},
                    new long[] {1},
                    OptionalInt.of(ProcessUid.current())));
            List<byte[]> hashes = hashes(3, 2);
            assertThatThrownBy(() -> engine.save(
                            "inst", 0, 0, 0, List.of(new LayerSave(EngineHarness.LAYER, ids(0, 2), hashes))))
                    .isInstanceOf(EngineException.class)
                    .hasMessage("save copy on device 0 did not finish within 200 ms (pega.save-deadline); the save was"
                            + " not stored")
                    .satisfies(e ->
                            assertThat(((EngineException) e).kind()).isEqualTo(EngineException.Kind.DEADLINE_EXCEEDED));
            assertThat(pool.outstandingAllocations())
                    .as("the stuck copy still owns its buffers")
                    .isPositive();

            gate.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> pool.outstandingAllocations() == 0);
            engine.flushSeals();
            assertThat(engine.queryPrefetch("inst", hashes, "req").hitBlocks())
                    .as("nothing was stored")
                    .isZero();
            engine.unregister("inst");
        }
    }

    @Test
    void shouldRefuseASaveWhenTheSealingQueueIsFullAndReleaseItsSlots() {
        PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(1 << 20));
        SealAgent sealer = new SealAgent(
                BlockCache.lru(AdmissionPolicy.ALWAYS),
                new EngineMetrics(),
                () -> 0L,
                Duration.ofSeconds(1),
                (namespace, keys, blocks) -> {});
        try {
            // Never started, so nothing drains: fill the queue with empty batches.
            for (int i = 0; i < SealAgent.QUEUE_DEPTH; i++) {
                sealer.submit(new SealBatch("ns", 1, new BlockKey[0], new int[0], new SlotData[0][]));
            }
            SealBatch refused = oneSlotBatch(pool);
            assertThatThrownBy(() -> sealer.submit(refused))
                    .isInstanceOf(EngineException.class)
                    .hasMessage("sealing queue is full (4096 saves waiting to be sealed); the save was not stored,"
                            + " retry later")
                    .satisfies(e -> assertThat(((EngineException) e).kind())
                            .isEqualTo(EngineException.Kind.RESOURCE_EXHAUSTED));
            assertThat(pool.outstandingAllocations())
                    .as("the refused batch's slot went back")
                    .isZero();
        } finally {
            sealer.close();
        }
        SealBatch late = oneSlotBatch(pool);
        assertThatThrownBy(() -> sealer.submit(late))
                .isInstanceOf(EngineException.class)
                .hasMessage("engine is shutting down");
        assertThat(pool.outstandingAllocations())
                .as("a save racing the shutdown does not leak")
                .isZero();
        pool.close();
    }

    private static SealBatch oneSlotBatch(PinnedMemoryPool pool) {
        PinnedAllocation a = pool.allocate(BLOCK_BYTES);
        SlotData slot = SlotData.contiguous(a, a.address(), BLOCK_BYTES);
        a.release();
        return new SealBatch(
                "ns", 1, new BlockKey[] {new BlockKey("ns", new byte[] {1})}, new int[] {0}, new SlotData[][] {{slot}});
    }

    @Test
    void shouldTimeOutAFlushOnlyAfterItsDeadline() {
        SealAgent sealer = new SealAgent(
                BlockCache.lru(AdmissionPolicy.ALWAYS),
                new EngineMetrics(),
                () -> 0L,
                Duration.ofMillis(100),
                (namespace, keys, blocks) -> {});
        try {
            // Not started: a flush is queued but never reached, and the barrier gives up after its deadline.
            sealer.awaitPendingSeals();
            assertThat(sealer.flush()).isNotDone();
        } finally {
            sealer.close();
        }
        assertThat(sealer.flush().isDone())
                .as("a stopped sealer answers barriers at once")
                .isTrue();
    }
}
