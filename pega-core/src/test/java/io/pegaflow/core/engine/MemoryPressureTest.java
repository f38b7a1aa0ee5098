package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.engine.EngineHarness.Worker;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.metrics.EngineCounter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A 1 MiB pool under a working set many times its size, 64 KiB blocks (a leased block is never a victim). Every case
 * runs with batch and blockwise allocation.
 */
@Timeout(60)
class MemoryPressureTest {
    private static final int BLOCK_BYTES = (int) (64 * KIB);
    private static final int DEVICE_BLOCKS = 16;
    private static final int BATCH = 4;

    private EngineHarness harness;
    private PegaEngine engine;
    private Worker w;

    private void start(boolean blockwise) {
        // Evict 4 blocks per reclaim step (default 64 would empty this small index at once), so LRU order is visible.
        EngineConfig config = EngineConfig.defaults(PoolConfig.of(MIB))
                .withEvictionBatch(BATCH)
                .withBlockwiseAlloc(blockwise);
        harness = new EngineHarness(config);
        engine = harness.engine;
        w = harness.worker("pressure", DEVICE_BLOCKS, BLOCK_BYTES);
        w.register();
    }

    @AfterEach
    void tearDown() {
        if (harness != null) {
            harness.close();
        }
    }

    /** Content ids of batch {@code round}: unique per round and block. */
    private static long[] contentOf(int round) {
        long[] out = new long[BATCH];
        for (int i = 0; i < BATCH; i++) {
            out[i] = 1_000L * (round + 1) + i;
        }
        return out;
    }

    /** Fills device blocks 0..3 with round content and saves them under salt {@code round}. */
    private void saveRound(int round) {
        w.fill(ids(0, BATCH), contentOf(round));
        w.save(ids(0, BATCH), hashes(round, BATCH));
    }

    private long hits(int round) {
        QueryOutcome outcome = w.query(hashes(round, BATCH), "probe-" + round);
        if (outcome.hitBlocks() > 0) {
            engine.release(outcome.lease());
        }
        return outcome.hitBlocks();
    }

    @ParameterizedTest(name = "blockwise={0}")
    @ValueSource(booleans = {false, true})
    void shouldKeepSavingThroughEviction(boolean blockwise) {
        start(blockwise);
        int rounds = 60; // 240 blocks of 64 KiB through a pool of 16

        for (int round = 0; round < rounds; round++) {
            saveRound(round);
            engine.flushSeals();
            assertThat(engine.pool().usedBytes())
                    .isLessThanOrEqualTo(engine.pool().capacityBytes());
        }

        assertThat(hits(rounds - 1)).isEqualTo(BATCH);
        assertThat(hits(0)).as("the oldest round was evicted").isZero();
        assertThat(engine.metrics().count(EngineCounter.CACHE_EVICTIONS)).isPositive();
        assertThat(engine.cache().residentBytes()).isLessThanOrEqualTo(MIB);
    }

    @ParameterizedTest(name = "blockwise={0}")
    @ValueSource(booleans = {false, true})
    void shouldLoadLeasedBlocksByteExactAfterHeavyEviction(boolean blockwise) {
        start(blockwise);
        saveRound(0);
        engine.flushSeals();
        QueryOutcome leased = w.query(hashes(0, BATCH), "keep");
        assertThat(leased.hitBlocks()).isEqualTo(BATCH);

        for (int round = 1; round <= 50; round++) {
            saveRound(round);
        }
        engine.flushSeals();

        assertThat(hits(0)).as("leased blocks are never victims").isEqualTo(BATCH);
        assertThat(hits(50)).isEqualTo(BATCH);
        w.zero();
        assertThat(w.load(leased.lease(), ids(0, BATCH)).succeeded()).isTrue();
        w.verify(ids(0, BATCH), contentOf(0));
    }

    @ParameterizedTest(name = "blockwise={0}")
    @ValueSource(booleans = {false, true})
    void shouldReturnNewDataAfterOldDataWasEvicted(boolean blockwise) {
        start(blockwise);
        long[] oldContent = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        long[] newContent = {91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102};
        List<byte[]> oldHashes = hashes(1, 12);
        List<byte[]> newHashes = hashes(2, 12);
        // 12 blocks (768 KiB) of old data, then the same device blocks overwritten and saved as 12 new ones: the
        // second generation only fits by evicting the first.
        w.fill(ids(0, 12), oldContent);
        for (int from = 0; from < 12; from += BATCH) {
            w.save(ids(from, from + BATCH), oldHashes.subList(from, from + BATCH));
        }
        engine.flushSeals();
        w.fill(ids(0, 12), newContent);
        for (int from = 0; from < 12; from += BATCH) {
            w.save(ids(from, from + BATCH), newHashes.subList(from, from + BATCH));
        }
        engine.flushSeals();

        QueryOutcome fresh = w.query(newHashes, "new");
        assertThat(fresh.hitBlocks()).isEqualTo(12);
        assertThat(w.query(oldHashes, "old").hitBlocks()).as("LRU head evicted").isZero();
        w.zero();
        assertThat(w.load(fresh.lease(), ids(0, 12)).succeeded()).isTrue();
        w.verify(ids(0, 12), newContent);
    }

    @ParameterizedTest(name = "blockwise={0}")
    @ValueSource(booleans = {false, true})
    void shouldReportPoolExhaustedWhenEveryResidentBlockIsLeased(boolean blockwise) {
        start(blockwise);
        List<byte[]> leases = new ArrayList<>();
        for (int round = 0; round < DEVICE_BLOCKS / BATCH; round++) {
            saveRound(round);
            engine.flushSeals();
            QueryOutcome leased = w.query(hashes(round, BATCH), "hold-" + round);
            assertThat(leased.hitBlocks()).isEqualTo(BATCH);
            leases.add(leased.lease());
        }
        long failuresBefore = engine.metrics().count(EngineCounter.POOL_ALLOC_FAILURES);

        assertThatThrownBy(() -> saveRound(99)).isInstanceOfSatisfying(EngineException.class, e -> {
            assertThat(e.kind()).isEqualTo(EngineException.Kind.INTERNAL);
            assertThat(e.getMessage())
                    .isEqualTo("storage error: pinned pool exhausted while allocating contiguous block buffer");
        });
        assertThat(engine.metrics().count(EngineCounter.POOL_ALLOC_FAILURES)).isGreaterThan(failuresBefore);
        for (int round = 0; round < leases.size(); round++) {
            assertThat(hits(round)).as("leased round %d stays resident", round).isEqualTo(BATCH);
        }

        leases.forEach(engine::release);
        saveRound(99);
        engine.flushSeals();
        assertThat(hits(99)).isEqualTo(BATCH);
    }
}
