package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.content;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pegaflow.core.cache.AdmissionPolicy;
import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.device.host.HostDeviceBackend;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.plan.RangePlan;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Save and Load of a plan large enough to be cut ({@link PlanChunks}): the lane gets the first layers' chunk and then
 * the rest, the bytes round-trip exactly, a failed chunk fails the whole request (nothing indexed for a Save, load
 * state −1 for a Load) and the pool gets every allocation back exactly once, also with concurrent Saves into a full
 * pool.
 */
@Timeout(120)
class ChunkedCopyTest {
    private static final int LAYERS = 8;
    private static final int BLOCKS = 512;
    private static final int BLOCK_BYTES = 256;
    private static final long LAYER_BYTES = (long) BLOCKS * BLOCK_BYTES;
    /** Every other block: no two ranges merge, so a Save of all of them plans 256 ranges per layer. */
    private static final int[] IDS = everyOther(BLOCKS);

    private final FaultingBackend backend = new FaultingBackend();
    private final List<TestShm> memories = new ArrayList<>();
    private PegaEngine engine;

    private static int[] everyOther(int blocks) {
        int[] out = new int[blocks / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = 2 * i;
        }
        return out;
    }

    /** The host backend, recording every plan and failing the n-th copy of a direction when told to. */
    private static final class FaultingBackend implements DeviceBackend {
        final HostDeviceBackend host = new HostDeviceBackend();
        final List<RangePlan> saved = new CopyOnWriteArrayList<>();
        final List<RangePlan> loaded = new CopyOnWriteArrayList<>();
        final AtomicInteger failSaveCopy = new AtomicInteger(-1); // counts down; the copy that sees 0 fails
        final AtomicInteger failLoadCopy = new AtomicInteger(-1);

        @Override
        public String name() {
            return host.name();
        }

        @Override
        public LayerMemory openLayer(Caller caller, int deviceId, byte[] wrapperBytes) {
            return host.openLayer(caller, deviceId, wrapperBytes);
        }

        @Override
        public DeviceCopier openCopier(int deviceId) {
            DeviceCopier c = host.openCopier(deviceId);
            return new DeviceCopier() {
                @Override
                public void copyToHost(RangePlan plan) {
                    saved.add(plan);
                    if (failSaveCopy.getAndDecrement() == 0) {
                        throw EngineException.storage("injected save copy failure");
                    }
                    c.copyToHost(plan);
                }

                @Override
                public void copyToDevice(RangePlan plan) {
                    loaded.add(plan);
                    if (failLoadCopy.getAndDecrement() == 0) {
                        throw EngineException.storage("injected load copy failure");
                    }
                    c.copyToDevice(plan);
                }

                @Override
                public void close() {
                    c.close();
                }
            };
        }

        @Override
        public void close() {
            host.close();
        }
    }

    private void launch(long poolBytes) {
        EngineConfig config = EngineConfig.defaults(PoolConfig.of(poolBytes));
        engine = PegaEngine.launch(new EngineContext()
                .config(config)
                .pool(PinnedMemoryPool.create(config.pool()))
                .backend(backend)
                .admission(AdmissionPolicy.ALWAYS));
    }

    private static List<String> layerNames() {
        List<String> out = new ArrayList<>();
        for (int l = 0; l < LAYERS; l++) {
            out.add("layer_" + l);
        }
        return out;
    }

    /** Registers {@code instanceId} with {@link #LAYERS} layers in one shm object of its own. */
    private TestShm register(String instanceId) {
        TestShm memory = TestShm.create("pega_chunk_", LAYERS * LAYER_BYTES);
        memories.add(memory);
        List<byte[]> descriptors = new ArrayList<>();
        long[] blocks = new long[LAYERS];
        long[] bytes = new long[LAYERS];
        long[] strides = new long[LAYERS];
        long[] segments = new long[LAYERS];
        for (int l = 0; l < LAYERS; l++) {
            descriptors.add(memory.descriptor(l * LAYER_BYTES, LAYER_BYTES));
            blocks[l] = BLOCKS;
            bytes[l] = BLOCK_BYTES;
            segments[l] = 1;
        }
        engine.registerContextBatch(RegisterCommand.inProcess(
                instanceId,
                "chunk-ns",
                0,
                1,
                1,
                0,
                LAYERS,
                0,
                layerNames(),
                descriptors,
                blocks,
                bytes,
                strides,
                segments,
                OptionalInt.of(ProcessUid.current())));
        return memory;
    }

    private static long contentId(int salt, int layer, int block) {
        return salt * 1_000_000L + layer * 1_000L + block;
    }

    private static void fill(TestShm memory, int salt) {
        for (int l = 0; l < LAYERS; l++) {
            for (int id : IDS) {
                memory.write(l * LAYER_BYTES + (long) id * BLOCK_BYTES, content(contentId(salt, l, id), BLOCK_BYTES));
            }
        }
    }

    private static void verify(TestShm memory, int salt) {
        for (int l = 0; l < LAYERS; l++) {
            for (int id : IDS) {
                assertThat(memory.read(l * LAYER_BYTES + (long) id * BLOCK_BYTES, BLOCK_BYTES))
                        .as("layer %d block %d", l, id)
                        .isEqualTo(content(contentId(salt, l, id), BLOCK_BYTES));
            }
        }
    }

    private void save(String instanceId, List<byte[]> h) {
        List<LayerSave> saves = new ArrayList<>();
        for (String name : layerNames()) {
            saves.add(new LayerSave(name, IDS, h));
        }
        engine.save(instanceId, 0, 0, 0, saves);
    }

    /** Loads the lease into the saved block ids; returns the final load state. */
    private long load(String instanceId, byte[] lease) {
        try (TestShm state = TestShm.loadState()) {
            engine.load(instanceId, 0, 0, state.name(), layerNames(), List.of(new LeaseLoad(lease, IDS)));
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(1))
                    .until(() -> state.state() != 0);
            return state.state();
        }
    }

    @AfterEach
    void assertNothingLeaked() {
        try {
            if (engine != null) {
                engine.cleanupInstances(null);
                engine.flushSeals();
                engine.runMaintenance();
                engine.cleanupMemory();
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                    assertThat(engine.activeLeases()).as("leases").isZero();
                    assertThat(engine.pool().outstandingAllocations())
                            .as("pool allocations")
                            .isZero();
                    assertThat(backend.host.mappedObjects()).as("shm mappings").isZero();
                });
            }
        } finally {
            if (engine != null) {
                engine.close();
            }
            memories.forEach(TestShm::close);
        }
    }

    @Test
    void shouldCopyAChunkedSaveAndLoadByteForByte() {
        launch(16 * MIB);
        TestShm memory = register("chunked");
        fill(memory, 1);
        List<byte[]> h = hashes(1, IDS.length);

        save("chunked", h);
        engine.flushSeals();
        QueryOutcome hit = engine.queryPrefetch("chunked", h, "r");
        memory.zero(0, LAYERS * LAYER_BYTES);

        assertThat(hit.hitBlocks()).isEqualTo(IDS.length);
        assertThat(load("chunked", hit.lease())).isEqualTo(1);
        verify(memory, 1);
        for (List<RangePlan> plans : List.of(backend.saved, backend.loaded)) {
            assertThat(plans).extracting(RangePlan::size).containsExactly(IDS.length, (LAYERS - 1) * IDS.length);
            assertThat(plans.get(0).totalBytes() + plans.get(1).totalBytes())
                    .isEqualTo((long) LAYERS * IDS.length * BLOCK_BYTES);
        }
        engine.unregister("chunked");
    }

    @Test
    void shouldStoreNothingWhenTheSecondChunkOfASaveFails() {
        launch(16 * MIB);
        TestShm memory = register("save-fault");
        fill(memory, 2);
        List<byte[]> h = hashes(2, IDS.length);
        backend.failSaveCopy.set(1);

        assertThatThrownBy(() -> save("save-fault", h))
                .isInstanceOf(EngineException.class)
                .hasMessageContaining("injected save copy failure");
        engine.flushSeals();

        assertThat(backend.saved).hasSize(2);
        assertThat(engine.queryPrefetch("save-fault", h, "r").hitBlocks()).isZero();
        assertThat(engine.pool().outstandingAllocations())
                .as("the failed save's allocations")
                .isZero();
        save("save-fault", h); // the pool and the lane are fine afterwards
        engine.flushSeals();
        QueryOutcome hit = engine.queryPrefetch("save-fault", h, "r2");
        memory.zero(0, LAYERS * LAYER_BYTES);
        assertThat(load("save-fault", hit.lease())).isEqualTo(1);
        verify(memory, 2);
        engine.unregister("save-fault");
    }

    @Test
    void shouldStoreNothingWhenTheFirstChunkOfASaveFails() {
        launch(16 * MIB);
        TestShm memory = register("first-fault");
        fill(memory, 3);
        List<byte[]> h = hashes(3, IDS.length);
        backend.failSaveCopy.set(0);

        assertThatThrownBy(() -> save("first-fault", h)).hasMessageContaining("injected save copy failure");
        engine.flushSeals();

        assertThat(backend.saved)
                .as("the second chunk still ran before the memory went back")
                .hasSize(2);
        assertThat(engine.queryPrefetch("first-fault", h, "r").hitBlocks()).isZero();
        assertThat(engine.pool().outstandingAllocations()).isZero();
        engine.unregister("first-fault");
    }

    @Test
    void shouldFailTheLoadWhenItsSecondChunkFails() {
        launch(16 * MIB);
        TestShm memory = register("load-fault");
        fill(memory, 4);
        List<byte[]> h = hashes(4, IDS.length);
        save("load-fault", h);
        engine.flushSeals();
        memory.zero(0, LAYERS * LAYER_BYTES);
        backend.failLoadCopy.set(1);

        assertThat(load("load-fault", engine.queryPrefetch("load-fault", h, "r").lease()))
                .isEqualTo(-1);

        assertThat(backend.loaded).hasSize(2);
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(engine.activeLeases()).isZero());
        QueryOutcome again = engine.queryPrefetch("load-fault", h, "r2");
        assertThat(again.hitBlocks()).as("the blocks stay stored").isEqualTo(IDS.length);
        assertThat(load("load-fault", again.lease())).isEqualTo(1);
        verify(memory, 4);
        engine.unregister("load-fault");
    }

    /**
     * Two workers save chunked requests into a pool that holds about four of them, so every Save evicts or finds the
     * pool full; each Save that is still whole when queried loads back exactly, and nothing leaks.
     */
    @Test
    void shouldStayExactAndLeakFreeWithConcurrentSavesIntoAFullPool() throws Exception {
        long saveBytes = (long) LAYERS * IDS.length * BLOCK_BYTES;
        launch(4 * saveBytes + MIB / 2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<Integer>> verified = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                String id = "steady-" + t;
                TestShm memory = register(id);
                int worker = t;
                verified.add(pool.submit(() -> {
                    int exact = 0;
                    for (int round = 0; round < 12; round++) {
                        int salt = 10 + worker * 100 + round;
                        fill(memory, salt);
                        List<byte[]> h = hashes(salt, IDS.length);
                        try {
                            save(id, h);
                        } catch (EngineException e) {
                            assertThat(e.getMessage()).contains("exhausted");
                            continue;
                        }
                        engine.flushSeals();
                        QueryOutcome hit = engine.queryPrefetch(id, h, "r" + round);
                        if (hit.hitBlocks() == IDS.length) {
                            memory.zero(0, LAYERS * LAYER_BYTES);
                            assertThat(load(id, hit.lease())).isEqualTo(1);
                            verify(memory, salt);
                            exact++;
                        } else if (hit.hitBlocks() > 0) {
                            engine.release(hit.lease());
                        }
                    }
                    return exact;
                }));
            }
            int exact = 0;
            for (Future<Integer> f : verified) {
                exact += f.get();
            }
            assertThat(exact).as("saves loaded back byte for byte").isPositive();
            assertThat(backend.saved.size())
                    .as("every Save went to the lane in two chunks")
                    .isEven();
        } finally {
            pool.shutdownNow();
        }
        engine.unregister("steady-0");
        engine.unregister("steady-1");
    }
}
