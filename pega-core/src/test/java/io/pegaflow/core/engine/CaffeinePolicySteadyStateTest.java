package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.engine.EngineHarness.Worker;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.metrics.EngineCounter;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code pega.cache.admission=caffeine} in steady state: a full pool, four clients saving, querying and loading at
 * once, each load checked byte for byte. The harness's close checks that no allocation, lease or mapping is left,
 * so a block freed twice or never shows here.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CaffeinePolicySteadyStateTest {
    private static final int BLOCK_BYTES = (int) (16 * KIB);
    private static final int BATCH = 8;
    private static final int CLIENTS = 4;
    private static final int ROUNDS = 40;

    private EngineHarness harness;

    @AfterEach
    void tearDown() {
        if (harness != null) {
            harness.close();
        }
    }

    private static long[] contentOf(int client, int round) {
        long[] out = new long[BATCH];
        for (int i = 0; i < BATCH; i++) {
            out[i] = 1_000_000L * (client + 1) + 100L * round + i;
        }
        return out;
    }

    @Test
    void shouldServeByteExactLoadsWithAFullPoolAndConcurrentClients() throws Exception {
        // 64 blocks of pool; the policy may hold 56 of them; four clients save 8 at a time
        EngineConfig config = EngineConfig.defaults(PoolConfig.of(MIB))
                .withEvictionBatch(4)
                .withBlockwiseAlloc(true)
                .withAdmission("caffeine");
        harness = new EngineHarness(config);
        PegaEngine engine = harness.engine;
        int hotHits = harness.concurrently(CLIENTS, 2 * BATCH, BLOCK_BYTES, (w, client) -> runClient(engine, w, client))
                .total();
        assertThat(hotHits).as("hot blocks found again across rounds").isPositive();
        engine.flushSeals();
        assertThat(engine.metrics().count(EngineCounter.CACHE_EVICTIONS)).isPositive();
        assertThat(engine.cache().residentBytes()).isLessThanOrEqualTo((long) (MIB * 0.875));
    }

    /** Each round: a new batch saved, then the client's hot batch (round 0) and the new one queried and loaded. */
    private static int runClient(PegaEngine engine, Worker w, int client) {
        int salt = 10 * client;
        w.fill(ids(0, BATCH), contentOf(client, 0));
        w.save(ids(0, BATCH), hashes(salt, BATCH));
        engine.flushSeals();
        int hotHits = 0;
        for (int round = 1; round <= ROUNDS; round++) {
            w.fill(ids(0, BATCH), contentOf(client, round));
            w.save(ids(0, BATCH), hashes(50 + 50 * client + round, BATCH));
            engine.flushSeals();
            hotHits += loadAndCheck(w, hashes(salt, BATCH), contentOf(client, 0), "hot-" + round);
        }
        return hotHits;
    }

    /** Loads whatever prefix hit into blocks 8.., checked byte for byte; a miss is recomputed and saved again. */
    private static int loadAndCheck(Worker w, List<byte[]> hashes, long[] content, String req) {
        int hits = EngineHarness.loadPrefixAndVerify(w, hashes, content, req, BATCH);
        if (hits == 0) {
            w.fill(ids(0, BATCH), content);
            w.save(ids(0, BATCH), hashes);
        }
        return hits;
    }
}
