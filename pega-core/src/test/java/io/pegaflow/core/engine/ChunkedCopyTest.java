package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.plan.RangePlan;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
    /** Every other block: no two ranges merge, so a Save of all of them plans 256 ranges per layer. */
    private static final int[] IDS = everyOther(BLOCKS);

    private final List<RangePlan> saved = new CopyOnWriteArrayList<>();
    private final List<RangePlan> loaded = new CopyOnWriteArrayList<>();
    private final AtomicInteger failSaveCopy = new AtomicInteger(-1); // counts down; the copy that sees 0 fails
    private final AtomicInteger failLoadCopy = new AtomicInteger(-1);
    private EngineHarness harness;
    private PegaEngine engine;

    private static int[] everyOther(int blocks) {
        int[] out = new int[blocks / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = 2 * i;
        }
        return out;
    }

    /** Records every plan the lane copies and fails the one the test counted down to. */
    private void beforeCopy(RangePlan plan, boolean toHost) {
        (toHost ? saved : loaded).add(plan);
        if ((toHost ? failSaveCopy : failLoadCopy).getAndDecrement() == 0) {
            throw EngineException.storage("injected " + (toHost ? "save" : "load") + " copy failure");
        }
    }

    private void launch(long poolBytes) {
        harness = new EngineHarness(EngineConfig.defaults(PoolConfig.of(poolBytes)), this::beforeCopy);
        engine = harness.engine;
    }

    /** An engine with a 16 MiB pool and {@code instanceId} registered on it. */
    private EngineHarness.Worker launchWith(String instanceId) {
        launch(16 * MIB);
        return register(instanceId);
    }

    /** Registers {@code instanceId} with {@link #LAYERS} layers in one shm object of its own. */
    private EngineHarness.Worker register(String instanceId) {
        EngineHarness.Worker worker = harness.worker(instanceId, LAYERS, BLOCKS, BLOCK_BYTES);
        worker.register();
        return worker;
    }

    /** The content of every saved block of {@code layer} for {@code salt}. */
    private static long[] contentIds(int salt, int layer) {
        long[] out = new long[IDS.length];
        for (int i = 0; i < IDS.length; i++) {
            out[i] = salt * 1_000_000L + layer * 1_000L + IDS[i];
        }
        return out;
    }

    private static void fill(EngineHarness.Worker worker, int salt) {
        for (int l = 0; l < LAYERS; l++) {
            worker.fill(l, IDS, contentIds(salt, l));
        }
    }

    private static void verify(EngineHarness.Worker worker, int salt) {
        for (int l = 0; l < LAYERS; l++) {
            worker.verify(l, IDS, contentIds(salt, l));
        }
    }

    /**
     * Fills {@code worker} with {@code salt}'s content, saves all of it and waits until it is sealed; returns the
     * hashes it saved under.
     */
    private List<byte[]> fillAndSave(EngineHarness.Worker worker, int salt) {
        fill(worker, salt);
        List<byte[]> h = hashes(salt, IDS.length);
        worker.save(IDS, h);
        engine.flushSeals();
        return h;
    }

    /** Loads the lease into the saved block ids; returns the final load state. */
    private static long load(EngineHarness.Worker worker, byte[] lease) {
        return worker.load(lease, IDS).state();
    }

    /** Asserts that {@code hit} covers every block and loads back {@code salt}'s content byte for byte. */
    private static void assertLoadsBack(EngineHarness.Worker worker, QueryOutcome hit, int salt) {
        assertThat(hit.hitBlocks()).isEqualTo(IDS.length);
        worker.zero();
        assertThat(load(worker, hit.lease())).isEqualTo(1);
        verify(worker, salt);
    }

    @AfterEach
    void assertNothingLeaked() {
        if (harness != null) {
            harness.close();
        }
    }

    @Test
    void shouldCopyAChunkedSaveAndLoadByteForByte() {
        EngineHarness.Worker worker = launchWith("chunked");

        List<byte[]> h = fillAndSave(worker, 1);

        assertLoadsBack(worker, worker.query(h, "r"), 1);
        for (List<RangePlan> plans : List.of(saved, loaded)) {
            assertThat(plans).extracting(RangePlan::size).containsExactly(IDS.length, (LAYERS - 1) * IDS.length);
            assertThat(plans.get(0).totalBytes() + plans.get(1).totalBytes())
                    .isEqualTo((long) LAYERS * IDS.length * BLOCK_BYTES);
        }
        engine.unregister("chunked");
    }

    @Test
    void shouldStoreNothingWhenTheSecondChunkOfASaveFails() {
        EngineHarness.Worker worker = launchWith("save-fault");
        failSaveCopy.set(1);

        assertThatThrownBy(() -> fillAndSave(worker, 2))
                .isInstanceOf(EngineException.class)
                .hasMessageContaining("injected save copy failure");
        engine.flushSeals();

        List<byte[]> h = hashes(2, IDS.length);
        assertThat(saved).hasSize(2);
        assertThat(worker.query(h, "r").hitBlocks()).isZero();
        assertThat(engine.pool().outstandingAllocations())
                .as("the failed save's allocations")
                .isZero();
        worker.save(IDS, h); // the pool and the lane are fine afterwards
        engine.flushSeals();
        assertLoadsBack(worker, worker.query(h, "r2"), 2);
        engine.unregister("save-fault");
    }

    @Test
    void shouldStoreNothingWhenTheFirstChunkOfASaveFails() {
        EngineHarness.Worker worker = launchWith("first-fault");
        failSaveCopy.set(0);

        assertThatThrownBy(() -> fillAndSave(worker, 3)).hasMessageContaining("injected save copy failure");
        engine.flushSeals();

        assertThat(saved)
                .as("the second chunk still ran before the memory went back")
                .hasSize(2);
        assertThat(worker.query(hashes(3, IDS.length), "r").hitBlocks()).isZero();
        assertThat(engine.pool().outstandingAllocations()).isZero();
        engine.unregister("first-fault");
    }

    @Test
    void shouldFailTheLoadWhenItsSecondChunkFails() {
        EngineHarness.Worker worker = launchWith("load-fault");
        List<byte[]> h = fillAndSave(worker, 4);
        worker.zero();
        failLoadCopy.set(1);

        assertThat(load(worker, worker.query(h, "r").lease())).isEqualTo(-1);

        assertThat(loaded).hasSize(2);
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(engine.activeLeases()).isZero());
        QueryOutcome again = worker.query(h, "r2");
        assertThat(again.hitBlocks()).as("the blocks stay stored").isEqualTo(IDS.length);
        assertLoadsBack(worker, again, 4);
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
                EngineHarness.Worker worker = register("steady-" + t);
                int first = 10 + t * 100;
                verified.add(pool.submit(() -> saveAndLoadBack(worker, first, 12)));
            }
            int exact = 0;
            for (Future<Integer> f : verified) {
                exact += f.get();
            }
            assertThat(exact).as("saves loaded back byte for byte").isPositive();
            assertThat(saved.size())
                    .as("every Save went to the lane in two chunks")
                    .isEven();
        } finally {
            pool.shutdownNow();
        }
        engine.unregister("steady-0");
        engine.unregister("steady-1");
    }

    /**
     * Saves {@code rounds} requests of salts {@code first}, {@code first + 1}, … and loads back each one that is whole
     * when queried; returns how many loaded back exactly.
     */
    private int saveAndLoadBack(EngineHarness.Worker worker, int first, int rounds) {
        int exact = 0;
        for (int round = 0; round < rounds; round++) {
            int salt = first + round;
            List<byte[]> h;
            try {
                h = fillAndSave(worker, salt);
            } catch (EngineException e) {
                assertThat(e.getMessage()).contains("exhausted");
                continue;
            }
            QueryOutcome hit = worker.query(h, "r" + round);
            if (hit.hitBlocks() == IDS.length) {
                assertLoadsBack(worker, hit, salt);
                exact++;
            } else if (hit.hitBlocks() > 0) {
                engine.release(hit.lease());
            }
        }
        return exact;
    }
}
