package io.pegaflow.core.tier;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The fall-through of a fetch down the tier chain, and the chain's ownership of its tiers. */
@Timeout(10)
class TierChainTest {
    private final PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(1 << 20));
    private final List<String> log = new CopyOnWriteArrayList<>();
    private final List<BlockKey> keys = List.of(key(0), key(1), key(2), key(3));

    @AfterEach
    void tearDown() {
        assertThat(pool.outstandingAllocations()).as("allocations leaked").isZero();
        pool.close();
    }

    private static BlockKey key(int i) {
        return new BlockKey("ns", new byte[] {(byte) i});
    }

    /** Supplies the leading keys it has; records what it was asked for. */
    private class SetTier implements BackingTier {
        private final String name;
        private final Set<BlockKey> has;
        private final boolean peers;

        SetTier(String name, Set<BlockKey> has) {
            this(name, has, false);
        }

        SetTier(String name, Set<BlockKey> has, boolean peers) {
            this.name = name;
            this.has = has;
            this.peers = peers;
        }

        @Override
        public boolean waitsForPeers() {
            return peers;
        }

        @Override
        public String tierName() {
            return name;
        }

        @Override
        public CompletableFuture<List<SealedBlock>> fetchPrefix(List<BlockKey> asked, ReclaimingAllocator memory) {
            log.add(name + " asked " + asked.size());
            List<SealedBlock> out = new ArrayList<>();
            for (BlockKey k : asked) {
                if (!has.contains(k)) {
                    break;
                }
                PinnedAllocation a = memory.allocate(512);
                out.add(new SealedBlock(new SlotData[] {SlotData.contiguous(a, a.address(), 512)}));
                a.release();
            }
            return CompletableFuture.completedFuture(out);
        }

        @Override
        public void close() {
            log.add(name + " closed");
        }
    }

    private static void releaseAll(TierChain.Fetched f) {
        f.blocks().forEach(SealedBlock::release);
    }

    @Test
    void shouldAskEachTierForWhatTheOnesBeforeCouldNotSupply() {
        TierChain chain =
                TierChain.of(List.of(new SetTier("ssd", Set.of(key(0), key(1))), new SetTier("rdma", Set.of(key(2)))));
        TierChain.Fetched f = chain.fetchPrefix(keys, pool::allocate).join();
        assertThat(f.blocks()).hasSize(3);
        assertThat(f.perTier()).containsExactly(2, 1);
        assertThat(log).containsExactly("ssd asked 4", "rdma asked 2");
        releaseAll(f);
    }

    @Test
    void shouldReleaseAPartialFetchWhenTheWholePrefixWasAskedFor() {
        TierChain chain = TierChain.of(
                List.of(new SetTier("ssd", Set.of(key(0), key(1))), new SetTier("rdma", Set.of(), true)),
                Duration.ofMillis(200),
                Duration.ofMillis(20));
        TierChain.Fetched f = chain.fetchWhole(keys, pool::allocate).join();
        assertThat(f.blocks()).isEmpty();
        assertThat(f.perTier()).containsExactly(0, 0);
        assertThat(log.stream().filter(l -> l.equals("rdma asked 2")).count())
                .as("the peer tier is asked again while the chain waits: %s", log)
                .isGreaterThan(1);
        assertThat(log).doesNotContain("ssd asked 2");
        // the pool check of tearDown: the two blocks the SSD tier supplied went back
    }

    @Test
    void shouldNotWaitWithoutATierOfPeers() {
        TierChain chain = TierChain.of(
                List.of(new SetTier("ssd", Set.of(key(0)))), Duration.ofSeconds(30), Duration.ofMillis(20));
        TierChain.Fetched f = chain.fetchWhole(keys, pool::allocate).join();
        assertThat(f.blocks()).isEmpty();
        assertThat(log).containsExactly("ssd asked 4");
    }

    @Test
    void shouldCompleteAWholeFetchOnceAPeerHoldsTheRest() {
        Set<BlockKey> peerHas = ConcurrentHashMap.newKeySet();
        TierChain chain = TierChain.of(
                List.of(new SetTier("ssd", Set.of(key(0))), new SetTier("rdma", peerHas, true)),
                Duration.ofSeconds(5),
                Duration.ofMillis(10));
        CompletableFuture<TierChain.Fetched> pending = chain.fetchWhole(keys, pool::allocate);
        peerHas.addAll(keys.subList(1, 4)); // the prefill side finished saving
        TierChain.Fetched f = pending.join();
        assertThat(f.blocks()).hasSize(4);
        assertThat(f.perTier()).containsExactly(1, 3);
        releaseAll(f);
    }

    @Test
    void shouldNotAskLaterTiersOnceEverythingWasSupplied() {
        TierChain chain = TierChain.of(List.of(new SetTier("ssd", Set.copyOf(keys)), new SetTier("rdma", Set.of())));
        TierChain.Fetched f = chain.fetchPrefix(keys, pool::allocate).join();
        assertThat(f.perTier()).containsExactly(4, 0);
        assertThat(log).containsExactly("ssd asked 4");
        releaseAll(f);
    }

    @Test
    void shouldTreatABrokenTierAsSupplyingNothingAndGoOn() {
        BackingTier throwing = new SetTier("ssd", Set.of()) {
            @Override
            public CompletableFuture<List<SealedBlock>> fetchPrefix(List<BlockKey> asked, ReclaimingAllocator m) {
                throw new IllegalStateException("disk on fire");
            }
        };
        BackingTier failing = new SetTier("nvme", Set.of()) {
            @Override
            public CompletableFuture<List<SealedBlock>> fetchPrefix(List<BlockKey> asked, ReclaimingAllocator m) {
                return CompletableFuture.failedFuture(new IllegalStateException("broken contract"));
            }
        };
        TierChain chain = TierChain.of(List.of(throwing, failing, new SetTier("rdma", Set.of(key(0)))));
        TierChain.Fetched f = chain.fetchPrefix(keys, pool::allocate).join();
        assertThat(f.perTier()).containsExactly(0, 0, 1);
        releaseAll(f);
    }

    @Test
    void shouldAnswerNothingWithoutTiers() {
        TierChain.Fetched f =
                TierChain.empty().fetchPrefix(keys, pool::allocate).join();
        assertThat(f.blocks()).isEmpty();
        assertThat(TierChain.empty().isEmpty()).isTrue();
    }

    @Test
    void shouldCloseItsTiersLastFirst() {
        TierChain chain = TierChain.of(List.of(new SetTier("ssd", Set.of()), new SetTier("rdma", Set.of())));
        chain.close();
        assertThat(log).containsExactly("rdma closed", "ssd closed");
    }
}
