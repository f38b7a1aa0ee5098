package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.content;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pegaflow.core.cache.AdmissionPolicy;
import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.plan.RangePlan;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two layer tensors that lie back to back in memory are still two allocations, and one DMA call cannot span two: no
 * range of a Save or Load plan may cross from one layer into the next, even when a request's blocks make the two
 * sides continue. (The cuda backend's first GPU run of two-layer workers hit exactly this.)
 */
@Timeout(60)
class LayerFenceTest {
    private static final int BLOCKS = 8;
    private static final int BLOCK_BYTES = (int) (4 * KIB);
    private static final long LAYER_BYTES = (long) BLOCKS * BLOCK_BYTES;

    @Test
    void shouldNotMergeTheLastBlockOfOneLayerWithTheFirstBlockOfTheNext() {
        List<RangePlan> plans = new CopyOnWriteArrayList<>();
        HookedHostBackend backend = new HookedHostBackend((plan, toHost) -> plans.add(plan));
        EngineConfig config = EngineConfig.defaults(PoolConfig.of(16 * MIB));
        try (TestShm memory = TestShm.create("pega_fence_", 2 * LAYER_BYTES);
                PegaEngine engine = PegaEngine.launch(new EngineContext()
                        .config(config)
                        .pool(PinnedMemoryPool.create(config.pool()))
                        .backend(backend)
                        .admission(AdmissionPolicy.ALWAYS))) {
            engine.registerContextBatch(RegisterCommand.inProcess(
                    "fence",
                    "ns",
                    0,
                    1,
                    1,
                    0,
                    2,
                    0,
                    List.of("layer_0", "layer_1"),
                    List.of(memory.descriptor(0, LAYER_BYTES), memory.descriptor(LAYER_BYTES, LAYER_BYTES)),
                    new long[] {BLOCKS, BLOCKS},
                    new long[] {BLOCK_BYTES, BLOCK_BYTES},
                    new long[] {0, 0},
                    new long[] {1, 1},
                    OptionalInt.of(ProcessUid.current())));
            int[] ids = {7, 0}; // layer_0's last block ends where layer_1's block 0 begins
            for (int layer = 0; layer < 2; layer++) {
                for (int i = 0; i < ids.length; i++) {
                    memory.write(
                            layer * LAYER_BYTES + (long) ids[i] * BLOCK_BYTES, content(10 * layer + i, BLOCK_BYTES));
                }
            }
            List<byte[]> h = hashes(5, ids.length);
            engine.save("fence", 0, 0, 0, List.of(new LayerSave("layer_0", ids, h), new LayerSave("layer_1", ids, h)));
            engine.flushSeals();
            byte[] lease = engine.queryPrefetch("fence", h, "r").lease();
            memory.zero(0, 2 * LAYER_BYTES);
            try (TestShm state = TestShm.loadState()) {
                int[] targets = {7, 0};
                engine.load(
                        "fence",
                        0,
                        0,
                        state.name(),
                        List.of("layer_0", "layer_1"),
                        List.of(new LeaseLoad(lease, targets)));
                await().atMost(Duration.ofSeconds(5)).until(() -> state.state() != 0);
                assertThat(state.state()).isEqualTo(1);
            }
            for (int layer = 0; layer < 2; layer++) {
                for (int i = 0; i < ids.length; i++) {
                    assertThat(memory.read(layer * LAYER_BYTES + (long) ids[i] * BLOCK_BYTES, BLOCK_BYTES))
                            .isEqualTo(content(10 * layer + i, BLOCK_BYTES));
                }
            }
            assertThat(plans).hasSize(2);
            for (RangePlan p : plans) {
                assertThat(p.size()).as("one range per block and layer").isEqualTo(4);
                for (int i = 0; i < p.size(); i++) {
                    assertThat(p.lengthBytes(i))
                            .as("range %d stays within one layer's block", i)
                            .isEqualTo(BLOCK_BYTES);
                }
            }
            engine.unregister("fence");
        }
    }
}
