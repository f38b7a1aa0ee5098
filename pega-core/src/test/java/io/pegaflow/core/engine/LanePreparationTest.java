package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.kernel.plan.RangePlan;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A registration has both lanes of the new device prepare their copier (streams, descriptor buffers) for a request of
 * every block of every layer, on the lanes' own threads, before it returns; a preparation that fails leaves the
 * registration and the copies working.
 */
@Timeout(60)
class LanePreparationTest {
    private static final int LAYERS = 4;
    private static final int BLOCKS = 64;
    private static final int BLOCK_BYTES = 512;

    /** One preparation as the copier saw it. */
    private record Prepared(long ranges, long bytes, boolean toHost, String thread) {}

    private final List<Prepared> prepared = new CopyOnWriteArrayList<>();
    private volatile boolean failPreparation;
    private EngineHarness harness;

    private final HookedHostBackend.CopyHook hook = new HookedHostBackend.CopyHook() {
        @Override
        public void beforeCopy(RangePlan plan, boolean toHost) {}

        @Override
        public void prepared(long ranges, long bytes, boolean toHost) {
            prepared.add(
                    new Prepared(ranges, bytes, toHost, Thread.currentThread().getName()));
            if (failPreparation) {
                throw EngineException.storage("injected preparation failure");
            }
        }
    };

    @AfterEach
    void assertNothingLeaked() {
        if (harness != null) {
            harness.close();
        }
    }

    private EngineHarness.Worker register(String instanceId) {
        harness = new EngineHarness(EngineConfig.defaults(PoolConfig.of(8 * MIB)), hook);
        EngineHarness.Worker worker = harness.worker(instanceId, LAYERS, BLOCKS, BLOCK_BYTES);
        worker.register();
        return worker;
    }

    @Test
    void shouldPrepareBothLanesOnTheirThreadsBeforeTheRegistrationReturns() {
        register("prepared");

        long ranges = (long) LAYERS * BLOCKS; // contiguous layers: one range per block
        assertThat(prepared)
                .as("both lanes prepared by the time register returned")
                .extracting(p -> List.of(p.ranges(), p.bytes(), p.toHost(), p.thread()))
                .containsExactlyInAnyOrder(
                        List.of(ranges, ranges * BLOCK_BYTES, true, "pega-prepared-dev0-save"),
                        List.of(ranges, ranges * BLOCK_BYTES, false, "pega-prepared-dev0-load"));
        harness.engine.unregister("prepared");
    }

    /**
     * Steady state: instances register (and prepare their lanes) while another one keeps saving into a pool it has
     * filled, so the reclaimer evicts under them; afterwards each new instance copies byte for byte, and closing the
     * harness finds no allocation, lease or mapping left.
     */
    @Test
    void shouldPrepareRegistrationsWhileAnotherInstanceSavesIntoAFullPool() throws Exception {
        harness = new EngineHarness(EngineConfig.defaults(PoolConfig.of(2 * MIB)), hook);
        EngineHarness.Worker busy = harness.worker("busy", LAYERS, BLOCKS, BLOCK_BYTES);
        busy.register();
        int[] all = IntStream.range(0, BLOCKS).toArray();
        AtomicBoolean saving = new AtomicBoolean(true);
        ExecutorService saver = Executors.newSingleThreadExecutor();
        Future<Integer> rounds = saver.submit(() -> {
            int round = 0;
            while (saving.get() || round < 40) { // 40 rounds of 128 KiB: the 2 MiB pool is full twice over
                busy.save(all, hashes(10 + round % 100, BLOCKS)); // salts 10..109, the joined ones 200..205
                round++;
            }
            return round;
        });
        List<EngineHarness.Worker> joined = new ArrayList<>();
        try {
            for (int i = 0; i < 6; i++) {
                EngineHarness.Worker w = harness.worker("joined-" + i, LAYERS, BLOCKS, BLOCK_BYTES);
                w.register();
                joined.add(w);
            }
        } finally {
            saving.set(false);
            saver.shutdown();
        }
        assertThat(rounds.get(60, TimeUnit.SECONDS)).isGreaterThanOrEqualTo(40);
        harness.engine.flushSeals();

        assertThat(harness.engine.metrics().count(EngineCounter.CACHE_EVICTIONS))
                .as("the pool was full")
                .isPositive();
        assertThat(prepared).hasSize(2 * 7);
        int[] ids = {1, 2, 3, 40};
        for (int i = 0; i < joined.size(); i++) {
            EngineHarness.Worker w = joined.get(i);
            long[] content = {10L * i, 10L * i + 1, 10L * i + 2, 10L * i + 3};
            w.fill(ids, content);
            List<byte[]> h = hashes(200 + i, ids.length);
            w.save(ids, h);
            harness.engine.flushSeals();
            QueryOutcome hit = w.query(h, "r" + i);
            assertThat(hit.hitBlocks()).isEqualTo(ids.length);
            w.zero();
            assertThat(w.load(hit.lease(), ids).state()).isEqualTo(1);
            w.verify(ids, content);
            harness.engine.unregister(w.instanceId);
        }
        harness.engine.unregister("busy");
    }

    @Test
    void shouldRegisterAndCopyByteForByteWhenThePreparationFails() {
        failPreparation = true;
        EngineHarness.Worker worker = register("unprepared");

        assertThat(prepared).hasSize(2);
        int[] ids = {0, 5, 6, 63};
        long[] content = {11, 12, 13, 14};
        worker.fill(ids, content);
        List<byte[]> h = hashes(7, ids.length);
        worker.save(ids, h);
        harness.engine.flushSeals();
        QueryOutcome hit = worker.query(h, "r");
        assertThat(hit.hitBlocks()).isEqualTo(ids.length);
        worker.zero();
        assertThat(worker.load(hit.lease(), ids).state()).isEqualTo(1);
        worker.verify(ids, content);
        harness.engine.unregister("unprepared");
    }
}
