package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.engine.EngineHarness.Worker;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.metrics.EngineCounter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Push staging in a pool that the cache filled, the state every node reaches after a few minutes of traffic: staging
 * evicts unreferenced cached blocks as a Save does, never leased ones or other staging, stays out of the index, and
 * fails with RESOURCE_EXHAUSTED leaving nothing allocated when nothing can be reclaimed. A 1 MiB pool of 16 blocks of
 * 64 KiB, evicted 4 at a time.
 */
@Timeout(60)
class StagingAllocatorTest {
    private static final int BLOCK_BYTES = (int) (64 * KIB);
    private static final int BLOCKS = 16;
    private static final int BATCH = 4;
    private static final int ROUNDS = BLOCKS / BATCH;

    private EngineHarness harness;
    private PegaEngine engine;
    private Worker w;

    @BeforeEach
    void start() {
        EngineConfig config = EngineConfig.defaults(PoolConfig.of(MIB)).withEvictionBatch(BATCH);
        harness = new EngineHarness(config);
        engine = harness.engine;
        w = harness.worker("cached", BLOCKS, BLOCK_BYTES);
        w.register();
    }

    @AfterEach
    void tearDown() {
        harness.close();
    }

    /** Saves {@link #ROUNDS} rounds of {@link #BATCH} blocks, round {@code r} under salt {@code r}: the pool is full. */
    private void fillPool() {
        for (int round = 0; round < ROUNDS; round++) {
            w.fill(ids(0, BATCH), content(round));
            w.save(ids(0, BATCH), hashes(round, BATCH));
            engine.flushSeals();
        }
        assertThat(engine.pool().largestFreeBytes())
                .as("the cache filled the pool")
                .isLessThan(BLOCK_BYTES);
    }

    private static long[] content(int round) {
        long[] out = new long[BATCH];
        for (int i = 0; i < BATCH; i++) {
            out[i] = 100L * (round + 1) + i;
        }
        return out;
    }

    private long hits(int round) {
        QueryOutcome q = w.query(hashes(round, BATCH), "probe-" + round);
        if (q.hitBlocks() > 0) {
            engine.release(q.lease());
        }
        return q.hitBlocks();
    }

    @Test
    void shouldEvictOnlyTheLeastRecentlyUsedBlocksStagingNeeds() {
        fillPool();
        long evictionsBefore = engine.metrics().count(EngineCounter.CACHE_EVICTIONS);

        PinnedAllocation staging = engine.staging().allocate("push staging of instance p rank 0", 2L * BLOCK_BYTES);
        try {
            long evicted = engine.metrics().count(EngineCounter.CACHE_EVICTIONS) - evictionsBefore;
            assertThat(evicted).as("one LRU batch made room").isEqualTo(BATCH);
            assertThat(hits(0)).as("the oldest round was the victim").isZero();
            for (int round = 1; round < ROUNDS; round++) {
                assertThat(hits(round)).as("round %d untouched", round).isEqualTo(BATCH);
            }
            // the staging bytes are the caller's: nothing in the index points at them
            assertThat(engine.cache().residentBytes()).isEqualTo((long) (BLOCKS - BATCH) * BLOCK_BYTES);
            w.zero();
            QueryOutcome kept = w.query(hashes(ROUNDS - 1, BATCH), "kept");
            assertThat(w.load(kept.lease(), ids(0, BATCH)).succeeded()).isTrue();
            w.verify(ids(0, BATCH), content(ROUNDS - 1));
        } finally {
            staging.release();
        }
    }

    @Test
    void shouldNeverEvictLeasedBlocksAndFailCleanlyWhenNothingCanBeReclaimed() {
        fillPool();
        List<byte[]> leases = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            QueryOutcome q = w.query(hashes(round, BATCH), "hold-" + round);
            assertThat(q.hitBlocks()).isEqualTo(BATCH);
            leases.add(q.lease());
        }
        int outstanding = engine.pool().outstandingAllocations();
        long used = engine.pool().usedBytes();

        assertThatThrownBy(() -> engine.staging().allocate("receive staging of instance d rank 0", BLOCK_BYTES))
                .isInstanceOfSatisfying(EngineException.class, e -> {
                    assertThat(e.kind()).isEqualTo(EngineException.Kind.RESOURCE_EXHAUSTED);
                    assertThat(e.getMessage())
                            .startsWith("receive staging of instance d rank 0: the pool has no room for 65536 bytes");
                });
        assertThat(engine.pool().outstandingAllocations())
                .as("nothing left allocated")
                .isEqualTo(outstanding);
        assertThat(engine.pool().usedBytes()).isEqualTo(used);
        for (int round = 0; round < ROUNDS; round++) {
            assertThat(hits(round)).as("leased round %d stays resident", round).isEqualTo(BATCH);
        }

        leases.forEach(engine::release);
        engine.staging().allocate("after the leases ended", BLOCK_BYTES).release();
    }

    @Test
    void shouldNeverEvictOtherStagingAndLetSavesReclaimAroundIt() {
        fillPool();
        PinnedAllocation first = engine.staging().allocate("first push", 8L * BLOCK_BYTES);
        try {
            // Saves keep the pool full around the staging: they evict cached blocks, never the staging
            for (int round = ROUNDS; round < 3 * ROUNDS; round++) {
                w.fill(ids(0, BATCH), content(round));
                w.save(ids(0, BATCH), hashes(round, BATCH));
                engine.flushSeals();
            }
            assertThat(hits(3 * ROUNDS - 1)).isEqualTo(BATCH);
            assertThat(engine.cache().residentBytes()).isLessThanOrEqualTo((long) (BLOCKS - 8) * BLOCK_BYTES);
            PinnedAllocation second = engine.staging().allocate("second push", 8L * BLOCK_BYTES);
            try {
                assertThat(engine.cache().residentBytes())
                        .as("every cached block gave way")
                        .isZero();
                assertThatThrownBy(() -> engine.staging().allocate("third push", BLOCK_BYTES))
                        .isInstanceOfSatisfying(
                                EngineException.class,
                                e -> assertThat(e.kind()).isEqualTo(EngineException.Kind.RESOURCE_EXHAUSTED));
                assertThat(engine.pool().outstandingAllocations())
                        .as("the two stagings")
                        .isEqualTo(2);
            } finally {
                second.release();
            }
        } finally {
            first.release();
        }
    }

    @Test
    void shouldRefuseStagingOverTheRequestShareWithoutEvicting() {
        fillPool();
        long evictionsBefore = engine.metrics().count(EngineCounter.CACHE_EVICTIONS);

        assertThatThrownBy(() -> engine.staging().allocate("push staging of instance big rank 0", 2 * MIB))
                .isInstanceOfSatisfying(EngineException.class, e -> {
                    assertThat(e.kind()).isEqualTo(EngineException.Kind.RESOURCE_EXHAUSTED);
                    assertThat(e.getMessage())
                            .startsWith("push staging of instance big rank 0 needs 2097152 bytes of pinned pool memory")
                            .contains("nothing was evicted")
                            .contains("pega.limits.request-pool-share");
                });
        assertThat(engine.metrics().count(EngineCounter.CACHE_EVICTIONS)).isEqualTo(evictionsBefore);
        for (int round = 0; round < ROUNDS; round++) {
            assertThat(hits(round)).isEqualTo(BATCH);
        }
    }
}
