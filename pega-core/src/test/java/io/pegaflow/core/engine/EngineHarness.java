package io.pegaflow.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.device.host.HostDeviceBackend;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real {@link PegaEngine} on the host backend with an adjustable clock, driven directly through its Java API. Each
 * {@link Worker} owns a {@code /dev/shm} object with one contiguous layer. {@link #close()} tears everything down and
 * asserts that no lease, pool allocation or shm mapping was left behind.
 */
final class EngineHarness implements AutoCloseable {
    static final long KIB = 1024;
    static final long MIB = 1024 * KIB;
    static final String NAMESPACE = "core-ns";
    static final String LAYER = "layer_0";

    private final AtomicLong nanos = new AtomicLong(TimeUnit.SECONDS.toNanos(1_000));
    private final List<Worker> workers = new ArrayList<>();
    final HostDeviceBackend backend = new HostDeviceBackend();
    final PegaEngine engine;

    EngineHarness(long poolBytes) {
        this(EngineConfig.defaults(PoolConfig.of(poolBytes)));
    }

    EngineHarness(EngineConfig config) {
        this(config, List.of());
    }

    /** An engine with backing {@code tiers}, in fetch order (the engine closes them). */
    EngineHarness(EngineConfig config, List<BackingTier> tiers) {
        this(config, tiers, new AgentGroup());
    }

    /** As above, the engine's agents reporting to {@code agents}. */
    EngineHarness(EngineConfig config, List<BackingTier> tiers, AgentGroup agents) {
        this(config, tiers, agents, EngineLimits.DEFAULTS);
    }

    /** As above, with {@code limits}. */
    EngineHarness(EngineConfig config, List<BackingTier> tiers, AgentGroup agents, EngineLimits limits) {
        this(config, tiers, agents, limits, List.of());
    }

    /** As above, with cluster-index listeners. */
    EngineHarness(
            EngineConfig config,
            List<BackingTier> tiers,
            AgentGroup agents,
            EngineLimits limits,
            List<BlockIndexListener> listeners) {
        NanoClock clock = nanos::get;
        EngineContext context = new EngineContext()
                .agents(agents)
                .limits(limits)
                .config(config)
                .pool(PinnedMemoryPool.create(config.pool()))
                .backend(backend)
                .clock(clock);
        tiers.forEach(context::tier);
        listeners.forEach(context::indexListener);
        this.engine = PegaEngine.launch(context);
    }

    void advance(Duration by) {
        nanos.addAndGet(by.toNanos());
    }

    /** A worker of {@code instanceId} (tp 0 of 1, world 1, device 0) with {@code numBlocks × blockBytes}. */
    Worker worker(String instanceId, int numBlocks, int blockBytes) {
        return worker(instanceId, NAMESPACE, 1, 0, numBlocks, blockBytes);
    }

    Worker worker(String instanceId, String namespace, int worldSize, int deviceId, int numBlocks, int blockBytes) {
        Worker w = new Worker(instanceId, namespace, worldSize, deviceId, numBlocks, blockBytes);
        workers.add(w);
        return w;
    }

    /** The reference harness hash {@code [salt] ++ u32_le(i)}. */
    static byte[] hash(int salt, int i) {
        return ByteBuffer.allocate(5)
                .order(ByteOrder.LITTLE_ENDIAN)
                .put((byte) salt)
                .putInt(i)
                .array();
    }

    static List<byte[]> hashes(int salt, int count) {
        List<byte[]> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(hash(salt, i));
        }
        return out;
    }

    static int[] ids(int from, int to) {
        int[] out = new int[to - from];
        for (int i = 0; i < out.length; i++) {
            out[i] = from + i;
        }
        return out;
    }

    /** Bytes that identify {@code contentId} at every position (SplitMix64 of id and word index). */
    static byte[] content(long contentId, int length) {
        byte[] out = new byte[length];
        for (int i = 0; i < length; i++) {
            long z = contentId * 0x9E3779B97F4A7C15L + (i >>> 3) * 0xD1B54A32D192ED03L;
            z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
            z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
            z ^= z >>> 31;
            out[i] = (byte) (z >>> ((i & 7) << 3));
        }
        return out;
    }

    /** Tears down and asserts nothing was leaked; the engine is closed afterwards. */
    @Override
    public void close() {
        try {
            engine.cleanupInstances(null);
            engine.flushSeals();
            engine.runMaintenance();
            engine.cleanupMemory();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(engine.activeLeases()).as("leases").isZero();
                assertThat(engine.pool().outstandingAllocations())
                        .as("pool allocations")
                        .isZero();
                assertThat(backend.mappedObjects()).as("shm mappings").isZero();
            });
        } finally {
            engine.close();
            workers.forEach(w -> w.memory.close());
        }
    }

    /** What a Load observed: the engine's error (or null) and the load state afterwards. */
    record LoadOutcome(EngineException error, long state) {
        boolean succeeded() {
            return error == null && state == 1;
        }
    }

    /** One registered device: a single contiguous layer {@link #LAYER} in its own shm object. */
    final class Worker {
        final String instanceId;
        final String namespace;
        final int worldSize;
        final int deviceId;
        final int numBlocks;
        final int blockBytes;
        final TestShm memory;

        private Worker(
                String instanceId, String namespace, int worldSize, int deviceId, int numBlocks, int blockBytes) {
            this.instanceId = instanceId;
            this.namespace = namespace;
            this.worldSize = worldSize;
            this.deviceId = deviceId;
            this.numBlocks = numBlocks;
            this.blockBytes = blockBytes;
            this.memory = TestShm.create("pega_coretest_", (long) numBlocks * blockBytes);
        }

        void register() {
            engine.registerContextBatch(RegisterCommand.inProcess(
                    instanceId,
                    namespace,
                    0,
                    1,
                    worldSize,
                    deviceId,
                    1,
                    0,
                    List.of(LAYER),
                    List.of(memory.descriptor(0, (long) numBlocks * blockBytes)),
                    new long[] {numBlocks},
                    new long[] {blockBytes},
                    new long[] {0},
                    new long[] {1},
                    OptionalInt.of(ProcessUid.current())));
        }

        /** Writes {@code content(contentIds[i])} into block {@code blockIds[i]}. */
        void fill(int[] blockIds, long[] contentIds) {
            for (int i = 0; i < blockIds.length; i++) {
                memory.write((long) blockIds[i] * blockBytes, content(contentIds[i], blockBytes));
            }
        }

        void zero() {
            memory.zero(0, (long) numBlocks * blockBytes);
        }

        /** Asserts block {@code blockIds[i]} holds {@code content(contentIds[i])}. */
        void verify(int[] blockIds, long[] contentIds) {
            for (int i = 0; i < blockIds.length; i++) {
                assertThat(memory.read((long) blockIds[i] * blockBytes, blockBytes))
                        .as("block %d should hold content %d", blockIds[i], contentIds[i])
                        .isEqualTo(content(contentIds[i], blockBytes));
            }
        }

        void verifyZeroed() {
            assertThat(memory.read(0, numBlocks * blockBytes))
                    .as("device memory of %s", instanceId)
                    .containsOnly(0);
        }

        void save(int[] blockIds, List<byte[]> hashes) {
            engine.save(instanceId, 0, 0, deviceId, List.of(new LayerSave(LAYER, blockIds, hashes)));
        }

        QueryOutcome query(List<byte[]> hashes, String reqId) {
            return engine.queryPrefetch(instanceId, hashes, reqId);
        }

        /** Loads one lease into {@code blockIds}; waits for the load state when the call was accepted. */
        LoadOutcome load(byte[] lease, int[] blockIds) {
            return load(lease, blockIds, 0);
        }

        /** Loads one lease into {@code blockIds} as tp rank {@code tpRank} (the worker registered rank 0). */
        LoadOutcome load(byte[] lease, int[] blockIds, long tpRank) {
            try (TestShm state = TestShm.loadState()) {
                try {
                    engine.load(
                            instanceId,
                            tpRank,
                            deviceId,
                            state.name(),
                            List.of(LAYER),
                            List.of(new LeaseLoad(lease, blockIds)));
                } catch (EngineException e) {
                    return new LoadOutcome(e, state.state());
                }
                await().atMost(Duration.ofSeconds(5))
                        .pollInterval(Duration.ofMillis(1))
                        .until(() -> state.state() != 0);
                return new LoadOutcome(null, state.state());
            }
        }
    }
}
