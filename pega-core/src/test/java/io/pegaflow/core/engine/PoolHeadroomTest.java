package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.engine.EngineHarness.Worker;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.metrics.EngineCounter;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code pega.pool.headroom}: once the pool is full, the sealing thread evicts after each Save until the headroom is
 * free, so a Save no larger than the headroom never evicts on its own thread; without a headroom every such Save does
 * (the reference). Leased blocks are never evicted for the headroom, and every load stays byte-exact. The harness's
 * close checks that no allocation, lease or mapping is left.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PoolHeadroomTest {
    private static final int BLOCK_BYTES = (int) (16 * KIB);
    private static final int BATCH = 8; // 128 KiB per Save: 64 blocks fit the 1 MiB pool
    private static final long HEADROOM = 256 * KIB;

    private EngineHarness harness;

    @AfterEach
    void tearDown() {
        if (harness != null) {
            harness.close();
        }
    }

    private static EngineConfig config(long headroomBytes) {
        return EngineConfig.defaults(PoolConfig.of(MIB))
                .withEvictionBatch(4)
                .withBlockwiseAlloc(true)
                .withHeadroomBytes(headroomBytes);
    }

    private static long[] contentOf(int client, int round) {
        long[] out = new long[BATCH];
        for (int i = 0; i < BATCH; i++) {
            out[i] = 1_000_000L * (client + 1) + 100L * round + i;
        }
        return out;
    }

    private static long free(PegaEngine engine) {
        return engine.pool().capacityBytes() - engine.pool().usedBytes();
    }

    private static long inlineEvictions(PegaEngine engine) {
        return engine.metrics().count(EngineCounter.CACHE_EVICTIONS)
                - engine.metrics().count(EngineCounter.CACHE_EVICTIONS_AHEAD);
    }

    @Test
    void shouldKeepTheHeadroomFreeSoThatSavesIntoAFullPoolNeverEvictOnTheirOwnThread() {
        harness = new EngineHarness(config(HEADROOM));
        PegaEngine engine = harness.engine;
        Worker w = harness.worker("headroom", 2 * BATCH, BLOCK_BYTES);
        w.register();
        for (int round = 0; round < 30; round++) { // 30 × 128 KiB through a 1 MiB pool
            w.fill(ids(0, BATCH), contentOf(0, round));
            w.save(ids(0, BATCH), hashes(round, BATCH));
            engine.flushSeals();
            assertThat(free(engine)).as("free after round %d", round).isGreaterThanOrEqualTo(HEADROOM);
            assertThat(loadAndCheck(w, hashes(round, BATCH), contentOf(0, round), "r" + round))
                    .isEqualTo(BATCH);
        }
        assertThat(engine.metrics().count(EngineCounter.CACHE_EVICTIONS_AHEAD))
                .as("blocks evicted ahead")
                .isPositive();
        assertThat(inlineEvictions(engine))
                .as("blocks evicted by a Save's own allocation")
                .isZero();
        assertThat(engine.cache().residentBytes()).isLessThanOrEqualTo(MIB - HEADROOM);
        // The newest blocks are the ones kept: the last round's neighbours are still resident.
        QueryOutcome older = w.query(hashes(28, BATCH), "older");
        assertThat(older.hitBlocks()).isEqualTo(BATCH);
        engine.release(older.lease());
    }

    @Test
    void shouldLeaveEvictionToTheSavesWithoutAHeadroom() {
        harness = new EngineHarness(config(0));
        PegaEngine engine = harness.engine;
        Worker w = harness.worker("no-headroom", 2 * BATCH, BLOCK_BYTES);
        w.register();
        for (int round = 0; round < 30; round++) {
            w.fill(ids(0, BATCH), contentOf(0, round));
            w.save(ids(0, BATCH), hashes(round, BATCH));
            engine.flushSeals();
        }
        assertThat(engine.metrics().count(EngineCounter.CACHE_EVICTIONS_AHEAD)).isZero();
        assertThat(inlineEvictions(engine)).as("blocks evicted by Saves").isPositive();
        assertThat(loadAndCheck(w, hashes(29, BATCH), contentOf(0, 29), "last")).isEqualTo(BATCH);
    }

    @Test
    void shouldNeverEvictLeasedBlocksForTheHeadroomAndStopWhenOnlyTheyAreLeft() {
        // A headroom of three quarters of the pool: after the first Saves, everything unleased goes at once.
        long headroom = 3 * MIB / 4;
        harness = new EngineHarness(config(headroom));
        PegaEngine engine = harness.engine;
        Worker w = harness.worker("leased", 2 * BATCH, BLOCK_BYTES);
        w.register();
        w.fill(ids(0, BATCH), contentOf(0, 0));
        w.save(ids(0, BATCH), hashes(0, BATCH));
        engine.flushSeals();
        QueryOutcome held = w.query(hashes(0, BATCH), "held");
        assertThat(held.hitBlocks()).isEqualTo(BATCH);
        for (int round = 1; round < 12; round++) {
            w.fill(ids(0, BATCH), contentOf(0, round));
            w.save(ids(0, BATCH), hashes(round, BATCH));
            engine.flushSeals();
        }
        assertThat(engine.metrics().count(EngineCounter.CACHE_EVICTIONS_AHEAD)).isPositive();
        assertThat(free(engine)).isGreaterThanOrEqualTo(headroom);
        int[] target = ids(BATCH, 2 * BATCH);
        assertThat(w.load(held.lease(), target).succeeded()).isTrue();
        w.verify(target, contentOf(0, 0));
    }

    @Test
    void shouldServeByteExactLoadsWithAFullPoolConcurrentClientsAndAHeadroom() throws Exception {
        harness = new EngineHarness(config(HEADROOM));
        PegaEngine engine = harness.engine;
        EngineHarness.ConcurrentRun run = harness.concurrently(4, 2 * BATCH, BLOCK_BYTES, (w, client) -> {
            int loaded = 0;
            for (int round = 0; round < 30; round++) {
                w.fill(ids(0, BATCH), contentOf(client, round));
                w.save(ids(0, BATCH), hashes(40 * client + round, BATCH));
                engine.flushSeals();
                // Another client's Saves may have evicted these already: whatever prefix hit is exact.
                loaded += loadAndCheck(
                        w, hashes(40 * client + round, BATCH), contentOf(client, round), client + "-" + round);
            }
            return loaded;
        });
        assertThat(run.total()).as("blocks loaded back").isPositive();
        // A load in flight pins its blocks, so the last concurrent seal may have stopped short of the headroom; the
        // next Save's seal, with nothing leased, restores it.
        Worker last = run.workers().get(0);
        last.fill(ids(0, BATCH), contentOf(0, 99));
        last.save(ids(0, BATCH), hashes(250, BATCH));
        engine.flushSeals();
        assertThat(engine.metrics().count(EngineCounter.CACHE_EVICTIONS_AHEAD)).isPositive();
        assertThat(free(engine)).isGreaterThanOrEqualTo(HEADROOM);
    }

    @Test
    void shouldRefuseAHeadroomThatLeavesNoPool() {
        EngineConfig base = config(0);
        assertThatThrownBy(() -> base.withHeadroomBytes(MIB))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("pega.pool.headroom");
        assertThatThrownBy(() -> base.withHeadroomBytes(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("pega.pool.headroom");
    }

    private static int loadAndCheck(Worker w, List<byte[]> hashes, long[] content, String req) {
        return EngineHarness.loadPrefixAndVerify(w, hashes, content, req, BATCH);
    }
}
