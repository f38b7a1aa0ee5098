package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.content;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.core.tier.ReclaimingAllocator;
import io.pegaflow.sys.OffHeap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A query whose RAM-miss suffix falls through the tier chain ({@code docs/architecture.md}, "Tier chain"): each tier
 * starts where the one before it stopped, the blocks load byte-exact whichever tier supplied them, and the query is
 * attributed once, per tier by name ({@code ram + ssd + rdma + miss == requested}), instead of counting every fetched
 * block as SSD.
 */
@Timeout(30)
class TieredQueryTest {
    private static final int BLOCK_BYTES = 4096;

    /**
     * A tier that holds some blocks' bytes: it re-materialises the leading keys it has into memory from the engine's
     * allocator, one contiguous slot per block, and stops at the first key it lacks.
     */
    static final class BytesTier implements BackingTier {
        private final String name;
        private final Map<BlockKey, byte[]> blocks = new HashMap<>();

        BytesTier(String name) {
            this.name = name;
        }

        void put(BlockKey key, byte[] bytes) {
            blocks.put(key, bytes);
        }

        @Override
        public String tierName() {
            return name;
        }

        @Override
        public CompletableFuture<List<SealedBlock>> fetchPrefix(List<BlockKey> keys, ReclaimingAllocator memory) {
            List<SealedBlock> out = new ArrayList<>();
            for (BlockKey key : keys) {
                byte[] bytes = blocks.get(key);
                PinnedAllocation a = bytes == null ? null : memory.allocate(bytes.length);
                if (a == null) {
                    break;
                }
                for (int i = 0; i < bytes.length; i++) {
                    OffHeap.putByte(a.address() + i, bytes[i]); // OFF-HEAP: inside the allocation just made
                }
                out.add(new SealedBlock(new SlotData[] {SlotData.contiguous(a, a.address(), bytes.length)}));
                a.release(); // the slot holds its own reference
            }
            return CompletableFuture.completedFuture(out);
        }
    }

    private final BytesTier ssd = new BytesTier("ssd");
    private final BytesTier remote = new BytesTier("rdma");
    private final EngineHarness harness =
            new EngineHarness(EngineConfig.defaults(PoolConfig.of(1 << 20)), List.of(ssd, remote));

    @AfterEach
    void tearDown() {
        harness.close();
    }

    @Test
    void shouldHaveEveryChainTiersSeriesBeforeItsFirstBlock() {
        // a meter registry binds the tier names it sees at startup: a tier first named at its first block never shows
        try (EngineHarness other =
                new EngineHarness(EngineConfig.defaults(PoolConfig.of(1 << 20)), List.of(new BytesTier("far-away")))) {
            assertThat(other.engine.metrics().tierNames()).contains("ram", "far-away", "miss");
            assertThat(other.engine.metrics().tierRequests("far-away")).isZero();
        }
    }

    @Test
    void shouldFallThroughTheChainAndAttributeEachTierOnce() {
        EngineHarness.Worker w = harness.worker("inst", 8, BLOCK_BYTES);
        w.register();
        List<byte[]> hashes = hashes(7, 5);
        // RAM holds block 0; SSD holds blocks 1 and 2 (and 4, which is past a gap); the remote node holds block 3.
        w.fill(ids(0, 1), new long[] {100});
        w.save(ids(0, 1), hashes.subList(0, 1));
        harness.engine.flushSeals();
        for (int i : new int[] {1, 2, 4}) {
            ssd.put(new BlockKey(EngineHarness.NAMESPACE, hashes.get(i)), content(100 + i, BLOCK_BYTES));
        }
        remote.put(new BlockKey(EngineHarness.NAMESPACE, hashes.get(3)), content(103, BLOCK_BYTES));

        assertThat(w.query(hashes, "req").loading()).isTrue();
        assertThat(harness.engine.metrics().tierRequests("ram"))
                .as("nothing is attributed before the decision")
                .isZero();
        QueryOutcome ready = w.query(hashes, "req");
        assertThat(ready.loading()).isFalse();
        assertThat(ready.hitBlocks()).isEqualTo(4);

        w.zero();
        assertThat(w.load(ready.lease(), ids(0, 4)).succeeded()).isTrue();
        w.verify(ids(0, 4), new long[] {100, 101, 102, 103});

        var m = harness.engine.metrics();
        assertThat(m.tierRequests("ram")).isEqualTo(1);
        assertThat(m.tierRequests("ssd")).isEqualTo(2);
        assertThat(m.tierRequests("rdma"))
                .as("the remote tier's blocks count as remote")
                .isEqualTo(1);
        assertThat(m.tierRequests("miss")).isEqualTo(1);
    }

    @Test
    void shouldAnnounceTheFetchedBlocksTheIndexAcceptedAsFindableHere() {
        List<String> sealed = new java.util.concurrent.CopyOnWriteArrayList<>();
        BlockIndexListener recorder = new BlockIndexListener() {
            @Override
            public void onSealed(String namespace, List<byte[]> hashes) {
                hashes.forEach(h ->
                        sealed.add(namespace + "/" + java.util.HexFormat.of().formatHex(h)));
            }

            @Override
            public void onEvicted(String namespace, List<byte[]> hashes) {}
        };
        BytesTier peer = new BytesTier("remote");
        try (EngineHarness h = new EngineHarness(
                EngineConfig.defaults(PoolConfig.of(1 << 20)),
                List.of(peer),
                new io.pegaflow.kernel.agent.AgentGroup(),
                EngineLimits.DEFAULTS,
                List.of(recorder))) {
            EngineHarness.Worker w = h.worker("inst", 4, BLOCK_BYTES);
            w.register();
            List<byte[]> hashes = hashes(9, 3);
            for (int i = 0; i < 2; i++) {
                peer.put(new BlockKey(EngineHarness.NAMESPACE, hashes.get(i)), content(200 + i, BLOCK_BYTES));
            }
            assertThat(w.query(hashes, "req").loading()).isTrue();
            QueryOutcome ready = w.query(hashes, "req");
            assertThat(ready.hitBlocks()).isEqualTo(2);
            assertThat(sealed)
                    .as("the two fetched blocks, announced when the RAM index took them")
                    .containsExactly(
                            EngineHarness.NAMESPACE + "/"
                                    + java.util.HexFormat.of().formatHex(hashes.get(0)),
                            EngineHarness.NAMESPACE + "/"
                                    + java.util.HexFormat.of().formatHex(hashes.get(1)));
            h.engine.release(ready.lease());
        }
    }

    @Test
    void shouldAttributeARamOnlyAnswerToRamAndMiss() {
        EngineHarness.Worker w = harness.worker("inst", 8, BLOCK_BYTES);
        w.register();
        List<byte[]> hashes = hashes(8, 2);
        w.save(ids(0, 2), hashes);
        harness.engine.flushSeals();

        QueryOutcome ready = w.query(hashes, "req");
        assertThat(ready.hitBlocks()).isEqualTo(2);
        harness.engine.release(ready.lease());

        var m = harness.engine.metrics();
        assertThat(m.tierRequests("ram")).isEqualTo(2);
        assertThat(m.tierRequests("ssd") + m.tierRequests("rdma") + m.tierRequests("miss"))
                .isZero();
    }
}
