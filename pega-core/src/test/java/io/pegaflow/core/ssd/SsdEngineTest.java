package io.pegaflow.core.ssd;

import static io.pegaflow.core.ssd.SsdFixtures.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pegaflow.core.cache.AdmissionPolicy;
import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.device.host.HostDeviceBackend;
import io.pegaflow.core.engine.EngineConfig;
import io.pegaflow.core.engine.EngineContext;
import io.pegaflow.core.engine.EngineLimits;
import io.pegaflow.core.engine.LayerSave;
import io.pegaflow.core.engine.LeaseLoad;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.engine.QueryOutcome;
import io.pegaflow.core.engine.RegisterCommand;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.metrics.EngineCounter;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SSD tier behind a real engine (host device backend): blocks spill to SSD after sealing, the RAM copy is evicted
 * with {@code cleanupMemory()}, a query answers Loading then Ready, and the load is byte-exact (the reference's
 * {@code ssd_cache} tests).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SsdEngineTest {
    private static final int BLOCKS = 4;

    @TempDir
    Path dir;

    private PegaEngine engine;
    private SsdStore store;
    private SsdBackingTier tier;
    private final List<HostShm> shms = new ArrayList<>();
    private final List<FaultyFile> files = new ArrayList<>();

    /** One instance's device memory: layers of BLOCKS blocks, in one shm object. */
    private final class Worker {
        final String instance;
        final HostShm memory;
        final List<String> layers = new ArrayList<>();
        final long bytesPerBlock;
        final long stride;
        final long layerBytes;

        Worker(String instance, String namespace, int layerCount, long bytesPerBlock, int segments, long stride) {
            this.instance = instance;
            this.bytesPerBlock = bytesPerBlock;
            this.stride = stride;
            this.layerBytes = segments == 1 ? BLOCKS * bytesPerBlock : stride + BLOCKS * bytesPerBlock;
            this.memory = new HostShm("pega_ssdtest_", layerCount * layerBytes);
            shms.add(memory);
            for (int l = 0; l < layerCount; l++) {
                layers.add("layer_" + l);
            }
            int n = layerCount;
            List<byte[]> wrappers = new ArrayList<>();
            for (int l = 0; l < n; l++) {
                wrappers.add(memory.wrapper(l * layerBytes, layerBytes));
            }
            long[] numBlocks = new long[n];
            long[] bpb = new long[n];
            long[] strides = new long[n];
            long[] segs = new long[n];
            java.util.Arrays.fill(numBlocks, BLOCKS);
            java.util.Arrays.fill(bpb, bytesPerBlock);
            java.util.Arrays.fill(strides, stride);
            java.util.Arrays.fill(segs, segments);
            engine.registerContextBatch(RegisterCommand.inProcess(
                    instance,
                    namespace,
                    0,
                    1,
                    1,
                    0,
                    n,
                    0,
                    layers,
                    wrappers,
                    numBlocks,
                    bpb,
                    strides,
                    segs,
                    OptionalInt.of(ProcessUid.current())));
            Random random = new Random(namespace.hashCode());
            byte[] all = new byte[(int) (n * layerBytes)];
            random.nextBytes(all);
            memory.put(0, all);
        }

        byte[] snapshot() {
            return memory.get(0, (int) (layers.size() * layerBytes));
        }

        void save(List<byte[]> hashes, int... blockIds) {
            List<LayerSave> saves = new ArrayList<>();
            for (String layer : layers) {
                saves.add(new LayerSave(layer, blockIds, hashes));
            }
            engine.save(instance, 0, 0, 0, saves);
        }

        QueryOutcome queryUntilReady(List<byte[]> hashes, String reqId) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            for (; ; ) {
                QueryOutcome q = engine.queryPrefetch(instance, hashes, reqId);
                if (!q.loading()) {
                    return q;
                }
                assertThat(System.nanoTime()).as("still loading").isLessThan(deadline);
                sleep(5);
            }
        }

        void load(QueryOutcome ready, int... blockIds) {
            try (HostShm state = HostShm.loadState()) {
                engine.load(instance, 0, 0, state.name, layers, List.of(new LeaseLoad(ready.lease(), blockIds)));
                await().atMost(Duration.ofSeconds(10)).until(() -> state.state() != 0);
                assertThat(state.state()).as("load state").isEqualTo(1);
            }
        }
    }

    private static List<byte[]> hashes(int salt, int n) {
        List<byte[]> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(ByteBuffer.allocate(5).put((byte) salt).putInt(i).array());
        }
        return out;
    }

    private void start(int maxPrefetchBlocks, boolean faulty) {
        SsdConfig config = SsdConfig.of(List.of(dir.resolve("ssd-0.dat"), dir.resolve("ssd-1.dat")), 8 * MIB);
        store = faulty ? FaultyFile.openStore(config, files) : SsdStore.open(config);
        tier = new SsdBackingTier(store, maxPrefetchBlocks);
        PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(4 * MIB));
        EngineConfig engineConfig = EngineConfig.defaults(pool.config()).withHostAlignmentBytes(512);
        engine = PegaEngine.launch(new EngineContext()
                .config(engineConfig)
                .pool(pool)
                .backend(new HostDeviceBackend())
                .admission(AdmissionPolicy.ALWAYS)
                // The filler Saves of these cases fill most of the small pool on purpose: no per-request share.
                .limits(new EngineLimits(1.0, 256, 16384, 512, 1024, 16384, 1024))
                .tier(tier)
                .spill(store));
    }

    @AfterEach
    void stop() {
        if (engine != null) {
            engine.cleanupInstances(null);
            store.close();
            engine.cleanupMemory();
            assertThat(engine.pool().outstandingAllocations())
                    .as("pool allocations")
                    .isZero();
            engine.close();
        }
        shms.forEach(HostShm::close);
    }

    /** Save, seal, write to SSD, then drop every RAM copy. */
    private void saveToSsdAndEvict(Worker w, List<byte[]> hashes, int... blockIds) {
        w.save(hashes, blockIds);
        engine.flushSeals();
        SsdFixtures.get(store.flush());
        engine.cleanupMemory();
        assertThat(engine.cache().size()).isZero();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void shouldLoadByteExactFromSsdAfterTheRamCopyWasEvicted() {
        start(800, false);
        Worker w = new Worker("inst", "ns-a", 3, 1000, 1, 0); // 1000-byte blocks: padded to 1024 on the host
        List<byte[]> hashes = hashes(1, BLOCKS);
        byte[] original = w.snapshot();
        saveToSsdAndEvict(w, hashes, 0, 1, 2, 3);
        w.memory.zero();

        QueryOutcome first = engine.queryPrefetch(w.instance, hashes, "req-1");
        assertThat(first.loading()).isTrue();
        QueryOutcome ready = w.queryUntilReady(hashes, "req-1");
        assertThat(ready.hitBlocks()).isEqualTo(BLOCKS);
        w.load(ready, 0, 1, 2, 3);

        assertThat(w.snapshot()).isEqualTo(original);
        assertThat(engine.metrics().tierRequests("ssd")).isEqualTo(BLOCKS);
        assertThat(store.metrics().count(SsdCounter.PREFETCH_BLOCKS)).isEqualTo(BLOCKS);
        assertThat(store.shardStatus()).allSatisfy(s -> assertThat(s.entries()).isEqualTo(2));
        // The fetched blocks went into RAM: the next query hits at once without SSD.
        QueryOutcome again = engine.queryPrefetch(w.instance, hashes, "req-2");
        assertThat(again.loading()).isFalse();
        assertThat(again.hitBlocks()).isEqualTo(BLOCKS);
        engine.release(again.lease());
    }

    @Test
    void shouldRoundTripTheSplitLayoutThroughSsd() {
        start(800, false);
        Worker w = new Worker("inst", "ns-split", 2, 2048, 2, 16 * 1024);
        List<byte[]> hashes = hashes(2, BLOCKS);
        byte[] original = w.snapshot();
        saveToSsdAndEvict(w, hashes, 0, 1, 2, 3);
        w.memory.zero();

        QueryOutcome ready = w.queryUntilReady(hashes, "req");
        assertThat(ready.hitBlocks()).isEqualTo(BLOCKS);
        w.load(ready, 0, 1, 2, 3);

        byte[] now = w.snapshot();
        // Only the bytes the blocks own (K and V planes) are restored; compare those.
        for (int l = 0; l < 2; l++) {
            long base = l * w.layerBytes;
            for (long off : new long[] {0, w.stride}) {
                int from = (int) (base + off);
                int len = (int) (BLOCKS * w.bytesPerBlock);
                assertThat(java.util.Arrays.copyOfRange(now, from, from + len))
                        .isEqualTo(java.util.Arrays.copyOfRange(original, from, from + len));
            }
        }
    }

    @Test
    void shouldCombineARamPrefixWithAnSsdSuffixInKeyOrder() {
        start(800, false);
        Worker w = new Worker("inst", "ns-c", 2, 1024, 1, 0);
        List<byte[]> hashes = hashes(3, BLOCKS);
        byte[] original = w.snapshot();
        saveToSsdAndEvict(w, hashes, 0, 1, 2, 3);
        w.save(hashes.subList(0, 2), 0, 1); // RAM again holds the first two
        engine.flushSeals();
        w.memory.zero();

        assertThat(engine.queryPrefetch(w.instance, hashes, "req").loading())
                .as("a RAM-miss suffix with SSD on answers Loading first")
                .isTrue();
        QueryOutcome ready = w.queryUntilReady(hashes, "req");
        assertThat(ready.hitBlocks()).isEqualTo(BLOCKS);
        w.load(ready, 0, 1, 2, 3);
        assertThat(w.snapshot()).isEqualTo(original);
        assertThat(engine.metrics().tierRequests("ram")).isEqualTo(2);
        assertThat(engine.metrics().tierRequests("ssd")).isEqualTo(2);
    }

    @Test
    void shouldStopAtTheFirstGapAndNeverStayLoadingOnAMiss() {
        start(800, false);
        Worker w = new Worker("inst", "ns-d", 1, 1024, 1, 0);
        List<byte[]> hashes = hashes(4, BLOCKS);
        saveToSsdAndEvict(w, hashes.subList(0, 2), 0, 1);

        QueryOutcome partial = w.queryUntilReady(hashes, "req-a");
        assertThat(partial.hitBlocks()).isEqualTo(2);
        engine.release(partial.lease());

        QueryOutcome miss = w.queryUntilReady(hashes(99, 3), "req-b");
        assertThat(miss.hitBlocks()).isZero();
        assertThat(miss.lease()).isEmpty();

        // A miss does not poison the req_id: once the blocks are on SSD the same req_id finds them.
        saveToSsdAndEvict(w, hashes(99, 3), 0, 1, 2);
        QueryOutcome later = w.queryUntilReady(hashes(99, 3), "req-b");
        assertThat(later.hitBlocks()).isEqualTo(3);
        engine.release(later.lease());
    }

    @Test
    void shouldGiveAFinishedPrefetchOnlyToTheSameInstanceAndHashes() {
        start(800, false);
        Worker a = new Worker("inst-a", "shared", 1, 1024, 1, 0);
        Worker b = new Worker("inst-b", "shared", 1, 1024, 1, 0);
        List<byte[]> hashes = hashes(5, BLOCKS);
        saveToSsdAndEvict(a, hashes, 0, 1, 2, 3);

        assertThat(engine.queryPrefetch(a.instance, hashes, "req").loading()).isTrue();
        await().atMost(Duration.ofSeconds(10)).until(() -> store.metrics().count(SsdCounter.PREFETCH_BLOCKS) == BLOCKS);

        // Same req_id, other instance: its own task, not instance a's result.
        assertThat(engine.queryPrefetch(b.instance, hashes, "req").loading()).isTrue();
        // Same instance and req_id, different hashes: starts over instead of answering for the old hashes.
        List<byte[]> drifted =
                List.of(hashes.get(0), hashes.get(1), hashes(6, 1).get(0));
        assertThat(engine.queryPrefetch(a.instance, drifted, "req").loading()).isTrue();
        QueryOutcome ready = a.queryUntilReady(drifted, "req");
        assertThat(ready.hitBlocks()).isEqualTo(2);
        engine.release(ready.lease());
        QueryOutcome other = b.queryUntilReady(hashes, "req");
        assertThat(other.hitBlocks()).isEqualTo(BLOCKS);
        engine.release(other.lease());
    }

    @Test
    void shouldTrimAPrefetchToTheMaxPrefetchBlocksBudget() {
        start(2, false);
        Worker w = new Worker("inst", "ns-e", 1, 1024, 1, 0);
        List<byte[]> hashes = hashes(7, BLOCKS);
        saveToSsdAndEvict(w, hashes, 0, 1, 2, 3);

        QueryOutcome ready = w.queryUntilReady(hashes, "req");
        assertThat(ready.hitBlocks()).isEqualTo(2);
        assertThat(store.metrics().count(SsdCounter.PREFETCH_BACKPRESSURE_BLOCKS))
                .isEqualTo(2);
        assertThat(store.metrics().gauge(SsdGauge.PREFETCH_RESERVED)).isZero();
        engine.release(ready.lease());
    }

    @Test
    void shouldAnswerFromRamOnlyWhileTheBudgetIsExhausted() {
        start(3, true);
        Worker w = new Worker("inst", "ns-f", 1, 1024, 1, 0);
        List<byte[]> hashes = hashes(8, BLOCKS);
        saveToSsdAndEvict(w, hashes, 0, 1, 2, 3);
        CountDownLatch gate = new CountDownLatch(1);
        files.forEach(f -> f.readGate = gate);

        assertThat(engine.queryPrefetch(w.instance, hashes, "slow").loading()).isTrue(); // reserves 3, reads stall
        await().atMost(Duration.ofSeconds(5)).until(() -> store.metrics().gauge(SsdGauge.PREFETCH_RESERVED) == 3);
        QueryOutcome starved = w.queryUntilReady(hashes, "other");
        assertThat(starved.hitBlocks())
                .as("no budget left: the SSD part is skipped")
                .isZero();
        assertThat(store.metrics().count(SsdCounter.PREFETCH_BACKPRESSURE_BLOCKS))
                .isEqualTo(1 + BLOCKS);

        gate.countDown();
        QueryOutcome slow = w.queryUntilReady(hashes, "slow");
        assertThat(slow.hitBlocks()).isEqualTo(3);
        engine.release(slow.lease());
        assertThat(store.metrics().gauge(SsdGauge.PREFETCH_RESERVED)).isZero();
    }

    @Test
    void shouldEvictRamToMakeRoomForPrefetchedBlocks() {
        start(800, false);
        Worker w = new Worker("inst", "ns-g", 4, 64 * 1024, 1, 0); // 4 blocks of 256 KiB
        List<byte[]> hashes = hashes(9, BLOCKS);
        byte[] original = w.snapshot();
        saveToSsdAndEvict(w, hashes, 0, 1, 2, 3);
        // Fill the 4 MiB pool with other blocks so that the prefetch must evict them.
        Worker filler = new Worker("filler", "ns-h", 14, 64 * 1024, 1, 0);
        filler.save(hashes(10, BLOCKS), 0, 1, 2, 3);
        engine.flushSeals();
        SsdFixtures.get(store.flush()); // a block being written to SSD is referenced, so eviction would skip it
        w.memory.zero();

        QueryOutcome ready = w.queryUntilReady(hashes, "req");
        assertThat(ready.hitBlocks()).isEqualTo(BLOCKS);
        w.load(ready, 0, 1, 2, 3);
        assertThat(w.snapshot()).isEqualTo(original);
        assertThat(engine.metrics().count(EngineCounter.CACHE_EVICTIONS)).isPositive();
    }
}
