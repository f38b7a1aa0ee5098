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
import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

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

    /** An engine whose device copies pass {@code hook} first (to record plans or fail a copy). */
    EngineHarness(EngineConfig config, HookedHostBackend.CopyHook hook) {
        this(config, List.of(), new AgentGroup(), EngineLimits.DEFAULTS, List.of(), hook);
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
        this(config, tiers, agents, limits, listeners, null);
    }

    private EngineHarness(
            EngineConfig config,
            List<BackingTier> tiers,
            AgentGroup agents,
            EngineLimits limits,
            List<BlockIndexListener> listeners,
            HookedHostBackend.@Nullable CopyHook hook) {
        NanoClock clock = nanos::get;
        EngineContext context = new EngineContext()
                .agents(agents)
                .limits(limits)
                .config(config)
                .pool(PinnedMemoryPool.create(config.pool()))
                .backend(hook == null ? backend : new HookedHostBackend(backend, hook))
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

    /** As above, with {@code layers} layers of {@code numBlocks × blockBytes} each, one after another in its shm. */
    Worker worker(String instanceId, int layers, int numBlocks, int blockBytes) {
        return addWorker(new Worker(instanceId, NAMESPACE, 1, 0, layers, numBlocks, blockBytes));
    }

    Worker worker(String instanceId, String namespace, int worldSize, int deviceId, int numBlocks, int blockBytes) {
        return addWorker(new Worker(instanceId, namespace, worldSize, deviceId, 1, numBlocks, blockBytes));
    }

    private Worker addWorker(Worker w) {
        workers.add(w);
        return w;
    }

    /**
     * The reference harness hash {@code [salt] ++ u32_le(i)}. The salt is one byte there too: salts 256 apart would give
     * the same hashes, so anything outside 0..255 is refused rather than silently colliding.
     */
    static byte[] hash(int salt, int i) {
        if (salt < 0 || salt > 0xFF) {
            throw new IllegalArgumentException("hash salt " + salt + " does not fit the hash's one salt byte");
        }
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

    /**
     * Queries {@code hashes}, loads whatever prefix hit into blocks {@code targetFrom..} and checks it byte for byte
     * against the first {@code content} ids; returns the hit count (0: nothing loaded, no lease left).
     */
    static int loadPrefixAndVerify(Worker w, List<byte[]> hashes, long[] content, String reqId, int targetFrom) {
        QueryOutcome q = w.query(hashes, reqId);
        int hits = (int) q.hitBlocks();
        if (hits == 0) {
            return 0;
        }
        int[] target = ids(targetFrom, targetFrom + hits);
        assertThat(w.load(q.lease(), target).succeeded()).isTrue();
        w.verify(target, Arrays.copyOf(content, hits));
        return hits;
    }

    /** One client's rounds against its own registered worker; returns what the client counts (hits, loaded blocks). */
    interface ClientRun {
        int run(Worker worker, int client) throws Exception;
    }

    /**
     * Registers {@code clients} workers of {@code numBlocks} blocks ({@code client-0}, …) and runs {@code run} for each on
     * its own thread at once; returns the sum of what they counted and the workers, for a last look.
     */
    ConcurrentRun concurrently(int clients, int numBlocks, int blockBytes, ClientRun run) throws Exception {
        List<Worker> registered = new ArrayList<>(clients);
        for (int c = 0; c < clients; c++) {
            Worker w = worker("client-" + c, numBlocks, blockBytes);
            w.register();
            registered.add(w);
        }
        ExecutorService threads = Executors.newFixedThreadPool(clients);
        try {
            List<Future<Integer>> results = new ArrayList<>(clients);
            for (int c = 0; c < clients; c++) {
                int client = c;
                Worker w = registered.get(c);
                results.add(threads.submit(() -> run.run(w, client)));
            }
            int total = 0;
            for (Future<Integer> f : results) {
                total += f.get(100, TimeUnit.SECONDS);
            }
            return new ConcurrentRun(total, registered);
        } finally {
            threads.shutdownNow();
        }
    }

    /** What {@link #concurrently} returns. */
    record ConcurrentRun(int total, List<Worker> workers) {}

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

    /**
     * One registered device: contiguous layers {@code layer_0} ({@link #LAYER}), {@code layer_1}, … one after another in
     * its own shm object. Saves and Loads cover every layer with the same block ids.
     */
    final class Worker {
        final String instanceId;
        final String namespace;
        final int worldSize;
        final int deviceId;
        final int numBlocks;
        final int blockBytes;
        final TestShm memory;
        private final List<String> layerNames = new ArrayList<>();

        private Worker(
                String instanceId,
                String namespace,
                int worldSize,
                int deviceId,
                int layers,
                int numBlocks,
                int blockBytes) {
            this.instanceId = instanceId;
            this.namespace = namespace;
            this.worldSize = worldSize;
            this.deviceId = deviceId;
            this.numBlocks = numBlocks;
            this.blockBytes = blockBytes;
            for (int l = 0; l < layers; l++) {
                layerNames.add("layer_" + l);
            }
            this.memory = TestShm.create("pega_coretest_", layers * layerBytes());
        }

        private long layerBytes() {
            return (long) numBlocks * blockBytes;
        }

        private long offset(int layer, int blockId) {
            return layer * layerBytes() + (long) blockId * blockBytes;
        }

        void register() {
            int layers = layerNames.size();
            List<byte[]> descriptors = new ArrayList<>(layers);
            long[] blocks = new long[layers];
            long[] bytes = new long[layers];
            long[] segments = new long[layers];
            for (int l = 0; l < layers; l++) {
                descriptors.add(memory.descriptor(l * layerBytes(), layerBytes()));
                blocks[l] = numBlocks;
                bytes[l] = blockBytes;
                segments[l] = 1;
            }
            engine.registerContextBatch(RegisterCommand.inProcess(
                    instanceId,
                    namespace,
                    0,
                    1,
                    worldSize,
                    deviceId,
                    layers,
                    0,
                    layerNames,
                    descriptors,
                    blocks,
                    bytes,
                    new long[layers],
                    segments,
                    OptionalInt.of(ProcessUid.current())));
        }

        /** Writes {@code content(contentIds[i])} into block {@code blockIds[i]} of the first layer. */
        void fill(int[] blockIds, long[] contentIds) {
            fill(0, blockIds, contentIds);
        }

        /** Writes {@code content(contentIds[i])} into block {@code blockIds[i]} of {@code layer}. */
        void fill(int layer, int[] blockIds, long[] contentIds) {
            for (int i = 0; i < blockIds.length; i++) {
                memory.write(offset(layer, blockIds[i]), content(contentIds[i], blockBytes));
            }
        }

        void zero() {
            memory.zero(0, layerNames.size() * layerBytes());
        }

        /** Asserts block {@code blockIds[i]} of the first layer holds {@code content(contentIds[i])}. */
        void verify(int[] blockIds, long[] contentIds) {
            verify(0, blockIds, contentIds);
        }

        /** Asserts block {@code blockIds[i]} of {@code layer} holds {@code content(contentIds[i])}. */
        void verify(int layer, int[] blockIds, long[] contentIds) {
            for (int i = 0; i < blockIds.length; i++) {
                assertThat(memory.read(offset(layer, blockIds[i]), blockBytes))
                        .as("layer %d block %d should hold content %d", layer, blockIds[i], contentIds[i])
                        .isEqualTo(content(contentIds[i], blockBytes));
            }
        }

        void verifyZeroed() {
            assertThat(memory.read(0, Math.toIntExact(layerNames.size() * layerBytes())))
                    .as("device memory of %s", instanceId)
                    .containsOnly(0);
        }

        void save(int[] blockIds, List<byte[]> hashes) {
            List<LayerSave> saves = new ArrayList<>(layerNames.size());
            for (String name : layerNames) {
                saves.add(new LayerSave(name, blockIds, hashes));
            }
            engine.save(instanceId, 0, 0, deviceId, saves);
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
                            layerNames,
                            List.of(new LeaseLoad(lease, blockIds)));
                } catch (EngineException e) {
                    return new LoadOutcome(e, state.state());
                }
                await().atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(1))
                        .until(() -> state.state() != 0);
                return new LoadOutcome(null, state.state());
            }
        }
    }
}
