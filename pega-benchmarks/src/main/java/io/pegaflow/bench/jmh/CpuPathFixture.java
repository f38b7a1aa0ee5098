package io.pegaflow.bench.jmh;

import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.engine.BlockIndexListener;
import io.pegaflow.core.engine.EngineConfig;
import io.pegaflow.core.engine.EngineContext;
import io.pegaflow.core.engine.LayerSave;
import io.pegaflow.core.engine.LeaseLoad;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.engine.QueryOutcome;
import io.pegaflow.core.engine.RegisterCommand;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.ShmDeviceMemory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.locks.LockSupport;

/**
 * The reference's {@code pegaflow-core/benches/cpu_path.rs} fixture (novitalabs/pegaflow v0.22.4) on the host backend.
 *
 * <ul>
 *   <li>Pool = {@code 4 × registered bytes + 64 MiB}, allocator hint = bytes per block, LRU unless a benchmark's
 *       {@code admission} param names another {@code pega.cache.admission} policy, no NUMA
 *       binding, no SSD tier.
 *   <li>Instance {@code cpu-path-bench}, namespace {@code cpu-path}, tp 1, world 1, layers {@code layer_{i}}, one
 *       segment, stride 0, block ids {@code 0..N-1}.
 *   <li>Device memory is one {@code /dev/shm} object; block i is filled with byte {@code (i % 251) + 1}. With
 *       {@link Layout#SHARED} every layer points at the same bytes (the reference's 61 × 1 B CPU benches); with
 *       {@link Layout#DISTINCT} each layer has its own region.
 *   <li>Hashes are 16 bytes, {@code salt_u64_le ‖ index_u64_le} as in the reference ({@link HashKind#REFERENCE}), or
 *       16 uniformly random-looking bytes ({@link HashKind#RANDOM}, like vLLM's sha256-derived hashes). Each layer
 *       gets its own arrays, as a decoded gRPC request would. {@link #setSalt} rewrites them in place: call it only after {@link #cleanup()} dropped every key
 *       that referenced them, which keeps per-invocation setup free of allocation so JMH's gc profiler sees only the
 *       engine's own allocation.
 * </ul>
 *
 * <p>Not thread-safe: one benchmark thread drives it.
 */
final class CpuPathFixture implements AutoCloseable {
    static final String INSTANCE = "cpu-path-bench";
    static final String NAMESPACE = "cpu-path";
    static final int HASH_BYTES = 16;
    private static final long SLACK_BYTES = 64L << 20;

    /** What the block hashes look like. */
    enum HashKind {
        /** {@code salt_u64_le ‖ index_u64_le}: the reference bench's structured hashes. */
        REFERENCE,
        /** SplitMix64 output of (salt, index): no structure, like production hashes. */
        RANDOM;

        static HashKind of(String name) {
            return valueOf(name.toUpperCase(java.util.Locale.ROOT));
        }
    }

    /** Where the layers' device bytes live. */
    enum Layout {
        /** Every layer registers the same device range. */
        SHARED,
        /** Each layer has its own range, back to back. */
        DISTINCT
    }

    private final ShmDeviceMemory device;
    private final PegaEngine engine;
    private final int blocks;
    private final List<String> layerNames;
    private final byte[][][] hashArrays;
    private final List<LayerSave> saves;
    private final List<byte[]> queryHashes;
    private final int[] loadIds;
    private HashKind hashKind = HashKind.REFERENCE;

    private CpuPathFixture(
            ShmDeviceMemory device,
            PegaEngine engine,
            int blocks,
            List<String> layerNames,
            byte[][][] hashArrays,
            List<LayerSave> saves) {
        this.device = device;
        this.engine = engine;
        this.blocks = blocks;
        this.layerNames = layerNames;
        this.hashArrays = hashArrays;
        this.saves = saves;
        this.queryHashes = Arrays.asList(hashArrays[0]);
        this.loadIds = saves.get(0).blockIds().clone();
    }

    static CpuPathFixture create(int blocks, int layers, long bytesPerBlock, Layout layout, BenchBackend backend) {
        return create(blocks, layers, bytesPerBlock, layout, backend, List.of(), "lru");
    }

    /** As above, with the RAM tier's policy named by {@code admission} ({@code pega.cache.admission}). */
    static CpuPathFixture create(
            int blocks, int layers, long bytesPerBlock, Layout layout, BenchBackend backend, String admission) {
        return create(blocks, layers, bytesPerBlock, layout, backend, List.of(), admission);
    }

    /** As above, with cluster-index listeners installed in the engine from the start. */
    static CpuPathFixture create(
            int blocks,
            int layers,
            long bytesPerBlock,
            Layout layout,
            BenchBackend backend,
            List<BlockIndexListener> indexListeners) {
        return create(blocks, layers, bytesPerBlock, layout, backend, indexListeners, "lru");
    }

    private static CpuPathFixture create(
            int blocks,
            int layers,
            long bytesPerBlock,
            Layout layout,
            BenchBackend backend,
            List<BlockIndexListener> indexListeners,
            String admission) {
        long layerBytes = blocks * bytesPerBlock;
        long deviceBytes = layout == Layout.SHARED ? layerBytes : layerBytes * layers;
        long registered = layerBytes * layers;
        ShmDeviceMemory device = ShmDeviceMemory.create(deviceBytes);
        PegaEngine engine = null;
        try {
            for (int i = 0; i < blocks; i++) {
                byte value = (byte) ((i % 251) + 1);
                int regions = layout == Layout.SHARED ? 1 : layers;
                for (int r = 0; r < regions; r++) {
                    device.fill(r * layerBytes + i * bytesPerBlock, bytesPerBlock, value);
                }
            }
            PoolConfig poolConfig =
                    new PoolConfig(4 * registered + SLACK_BYTES, 1, false, PoolConfig.NO_NUMA_NODE, bytesPerBlock, 0);
            // A lease TTL far beyond any run, so no lease expires between the untimed query and the timed load.
            EngineConfig config = EngineConfig.defaults(poolConfig)
                    .withLeaseTtl(Duration.ofHours(1))
                    .withAdmission(admission);
            EngineContext context = new EngineContext()
                    .config(config)
                    .pool(PinnedMemoryPool.create(poolConfig))
                    .backend(backend.create());
            indexListeners.forEach(context::indexListener);
            engine = PegaEngine.launch(context);

            List<String> names = new ArrayList<>(layers);
            List<byte[]> wrappers = new ArrayList<>(layers);
            long[] numBlocks = new long[layers];
            long[] bpb = new long[layers];
            long[] strides = new long[layers];
            long[] segments = new long[layers];
            for (int l = 0; l < layers; l++) {
                names.add("layer_" + l);
                long offset = layout == Layout.SHARED ? 0 : l * layerBytes;
                wrappers.add(device.descriptor(offset, layerBytes));
                numBlocks[l] = blocks;
                bpb[l] = bytesPerBlock;
                segments[l] = 1;
            }
            engine.registerContextBatch(RegisterCommand.inProcess(
                    INSTANCE,
                    NAMESPACE,
                    0,
                    1,
                    1,
                    0,
                    layers,
                    0,
                    names,
                    wrappers,
                    numBlocks,
                    bpb,
                    strides,
                    segments,
                    OptionalInt.of(ProcessUid.current())));

            byte[][][] hashArrays = new byte[layers][blocks][HASH_BYTES];
            List<LayerSave> saves = new ArrayList<>(layers);
            for (int l = 0; l < layers; l++) {
                int[] ids = new int[blocks];
                for (int i = 0; i < blocks; i++) {
                    ids[i] = i;
                    putLongLe(hashArrays[l][i], 8, i);
                }
                saves.add(new LayerSave(names.get(l), ids, Arrays.asList(hashArrays[l])));
            }
            return new CpuPathFixture(device, engine, blocks, List.copyOf(names), hashArrays, List.copyOf(saves));
        } catch (RuntimeException | Error e) {
            if (engine != null) {
                engine.close();
            }
            device.close();
            throw e;
        }
    }

    /** Chooses the hash shape for the following {@link #setSalt} calls. */
    CpuPathFixture hashes(HashKind kind) {
        this.hashKind = kind;
        return this;
    }

    /** Rewrites every hash for {@code salt}, in place. Only after {@link #cleanup()}: see the class comment. */
    void setSalt(long salt) {
        for (byte[][] layer : hashArrays) {
            for (int i = 0; i < layer.length; i++) {
                if (hashKind == HashKind.REFERENCE) {
                    putLongLe(layer[i], 0, salt);
                    putLongLe(layer[i], 8, i);
                } else {
                    long seed = salt * 0x9E3779B97F4A7C15L + i;
                    putLongLe(layer[i], 0, mix64(seed));
                    putLongLe(layer[i], 8, mix64(seed ^ 0xD1B54A32D192ED03L));
                }
            }
        }
    }

    private static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Saves and seals every block once under salt 1, for benchmarks that read resident blocks. */
    CpuPathFixture primed() {
        setSalt(1);
        save();
        flush();
        return this;
    }

    /** One Save of every block of every layer. */
    void save() {
        engine.save(INSTANCE, 0, 0, 0, saves);
    }

    /** The visibility barrier: every Save so far is sealed and in the index. */
    void flush() {
        engine.flushSeals();
    }

    /** Drains the RAM index (the reference's {@code cleanup_memory_cache()}). */
    void cleanup() {
        engine.cleanupMemory();
    }

    /** QueryPrefetch of all N hashes of layer 0; fails unless every block hit. Returns the lease. */
    byte[] queryAllHit(String reqId) {
        QueryOutcome outcome = engine.queryPrefetch(INSTANCE, queryHashes, reqId);
        if (outcome.loading() || outcome.hitBlocks() != blocks) {
            throw new IllegalStateException("expected " + blocks + " hits, got " + outcome);
        }
        return outcome.lease();
    }

    void release(byte[] lease) {
        engine.release(lease);
    }

    /** Load of a lease into block ids {@code 0..N-1} of every layer, waiting for the load state (1 ms polls). */
    void loadAndWait(byte[] lease) {
        try (LoadStateShm state = LoadStateShm.create()) {
            engine.load(INSTANCE, 0, 0, state.name(), layerNames, List.of(new LeaseLoad(lease, loadIds)));
            long result = state.awaitTerminal(Duration.ofSeconds(30));
            if (result != LoadStateShm.SUCCESS) {
                throw new IllegalStateException("load failed with state " + result);
            }
        }
    }

    /**
     * As {@link #loadAndWait} but polling with a backoff from 20 µs to 1 ms instead of every 1 ms, to see a small load
     * without the reference's poll floor. It neither spins nor polls fast for long: on this 2-vCPU machine a waiter
     * that wakes every few microseconds slowed the lane's memcpy by about 40%.
     */
    void loadAndPoll(byte[] lease) {
        try (LoadStateShm state = LoadStateShm.create()) {
            engine.load(INSTANCE, 0, 0, state.name(), layerNames, List.of(new LeaseLoad(lease, loadIds)));
            long result = awaitWithBackoff(state);
            if (result != LoadStateShm.SUCCESS) {
                throw new IllegalStateException("load failed with state " + result);
            }
        }
    }

    /** Polls a load state with a park doubling from 20 µs to 1 ms; returns the terminal state. */
    static long awaitWithBackoff(LoadStateShm state) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        long park = 20_000;
        long result;
        while ((result = state.state()) == LoadStateShm.PENDING) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("load still pending after 30 s");
            }
            LockSupport.parkNanos(park);
            park = Math.min(1_000_000, park * 2);
        }
        return result;
    }

    PegaEngine engine() {
        return engine;
    }

    ShmDeviceMemory device() {
        return device;
    }

    int blocks() {
        return blocks;
    }

    @Override
    public void close() {
        try {
            engine.close();
        } finally {
            device.close();
        }
    }

    static void putLongLe(byte[] dst, int offset, long value) {
        for (int i = 0; i < 8; i++) {
            dst[offset + i] = (byte) (value >>> (8 * i));
        }
    }
}
