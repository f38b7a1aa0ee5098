package io.pegaflow.core.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Caffeine policy's invariants on real pool memory: the index's bytes and the policy's weight agree after every
 * step, referenced blocks are never victims (neither of Caffeine's insert-time eviction nor of the reclaim path),
 * and every block's memory is freed exactly once (a second release throws; the pool ends empty).
 */
class TinyLfuBlockCacheTest {
    private static final int BLOCK_BYTES = 1024;
    private static final int BUDGET_BLOCKS = 8;

    private final PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(1 << 20));
    private final List<EvictedBlocks> sunk = new ArrayList<>();
    private final TinyLfuBlockCache cache = new TinyLfuBlockCache((long) BUDGET_BLOCKS * BLOCK_BYTES, sunk::add);
    private final List<SealedBlock> outside = new ArrayList<>();

    @AfterEach
    void freeEverything() {
        cache.evictAll().releaseAll();
        sunk.forEach(EvictedBlocks::releaseAll);
        outside.forEach(SealedBlock::release);
        assertThat(pool.outstandingAllocations()).as("allocations leaked").isZero();
        pool.close();
    }

    private SealedBlock block() {
        PinnedAllocation allocation = pool.allocate(BLOCK_BYTES);
        SlotData slot = SlotData.contiguous(allocation, allocation.address(), BLOCK_BYTES);
        allocation.release();
        return new SealedBlock(new SlotData[] {slot});
    }

    private static BlockKey key(int i) {
        return new BlockKey("ns", new byte[] {9, (byte) (i >> 8), (byte) i});
    }

    /** Inserts one block per id; rejected blocks stay the test's to release. */
    private InsertOutcome[] insert(int... ids) {
        List<BlockKey> keys = new ArrayList<>();
        List<SealedBlock> blocks = new ArrayList<>();
        for (int id : ids) {
            keys.add(key(id));
            blocks.add(block());
        }
        InsertOutcome[] outcomes = new InsertOutcome[ids.length];
        cache.insertAll(keys, blocks, outcomes);
        for (int i = 0; i < ids.length; i++) {
            if (outcomes[i] != InsertOutcome.INSERTED) {
                assertThat(blocks.get(i).refCount())
                        .as("a turned-away block stays the caller's")
                        .isEqualTo(1);
                outside.add(blocks.get(i));
            }
        }
        return outcomes;
    }

    private long evictedBytes() {
        return sunk.stream().mapToLong(EvictedBlocks::footprintBytes).sum();
    }

    private SealedBlock lease(int id) {
        SealedBlock[] out = new SealedBlock[1];
        assertThat(cache.prefix(List.of(key(id)), out)).isEqualTo(1);
        outside.add(out[0]);
        return out[0];
    }

    @Test
    void shouldKeepTheIndexBytesAndThePolicyWeightEqual() {
        for (int i = 0; i < 40; i++) {
            insert(i);
            assertThat(cache.policyWeightedBytes()).isEqualTo(cache.residentBytes());
            assertThat(cache.residentBytes()).isEqualTo((long) cache.size() * BLOCK_BYTES);
        }
        assertThat(cache.residentBytes()).isLessThanOrEqualTo((long) BUDGET_BLOCKS * BLOCK_BYTES);
        EvictedBlocks reclaimed = cache.evictColdest(3);
        assertThat(reclaimed.count()).isEqualTo(3);
        assertThat(cache.policyWeightedBytes()).isEqualTo(cache.residentBytes());
        reclaimed.releaseAll();
    }

    @Test
    void shouldNeverEvictLeasedBlocksWhileInserting() {
        insert(0, 1, 2, 3);
        SealedBlock[] leased = {lease(0), lease(1), lease(2), lease(3)};
        for (int i = 100; i < 160; i++) {
            insert(i);
        }
        for (int i = 0; i < 4; i++) {
            assertThat(cache.contains(key(i))).as("leased block %d", i).isTrue();
            assertThat(leased[i].refCount()).isEqualTo(2);
        }
        assertThat(sunk).allSatisfy(e -> assertThat(e.stillReferenced()).isZero());
        assertThat(evictedBytes()).isPositive();
        assertThat(cache.referencedEvictions()).isZero();
        assertThat(cache.policyWeightedBytes()).isEqualTo(cache.residentBytes());
    }

    @Test
    void shouldSkipReferencedBlocksWhenReclaiming() {
        insert(0, 1, 2, 3);
        lease(0);
        lease(2);
        EvictedBlocks evicted = cache.evictColdest(10);
        assertThat(evicted.count()).isEqualTo(2);
        assertThat(evicted.stillReferenced()).isZero();
        assertThat(cache.contains(key(0))).isTrue();
        assertThat(cache.contains(key(2))).isTrue();
        assertThat(cache.contains(key(1))).isFalse();
        evicted.releaseAll();
        assertThat(cache.policyWeightedBytes()).isEqualTo(2L * BLOCK_BYTES);
    }

    @Test
    void shouldKeepAHotSetThroughAScan() {
        for (int i = 0; i < 4; i++) {
            insert(i);
        }
        for (int round = 0; round < 8; round++) {
            for (int i = 0; i < 4; i++) {
                SealedBlock[] out = new SealedBlock[1];
                if (cache.prefix(List.of(key(i)), out) == 1) {
                    out[0].release();
                }
            }
        }
        int rejected = 0;
        for (int i = 1000; i < 1100; i++) {
            if (insert(i)[0] == InsertOutcome.REJECTED) {
                rejected++;
            }
        }
        for (int i = 0; i < 4; i++) {
            assertThat(cache.contains(key(i))).as("hot block %d", i).isTrue();
        }
        assertThat(rejected)
                .as("scan blocks turned away by the frequency filter")
                .isPositive();
    }

    @Test
    void shouldTurnNewcomersAwayRatherThanEvictALeasedBlock() {
        for (int seen = 0; seen < 3; seen++) {
            insert(100, 101, 102, 103, 104, 105, 106, 107);
            cache.evictAll().releaseAll();
        }
        insert(0, 1, 2, 3, 4, 5, 6, 7);
        for (int i = 0; i < 8; i++) {
            lease(i);
        }
        InsertOutcome[] outcomes = insert(100, 101, 102, 103, 104, 105, 106, 107);
        for (int i = 0; i < 8; i++) {
            assertThat(cache.contains(key(i))).as("leased block %d", i).isTrue();
        }
        assertThat(outcomes).contains(InsertOutcome.REJECTED);
        assertThat(cache.referencedEvictions()).isZero();
        assertThat(sunk).allSatisfy(e -> assertThat(e.stillReferenced()).isZero());
        assertThat(cache.policyWeightedBytes()).isEqualTo(cache.residentBytes());
        assertThat(cache.residentBytes()).isLessThanOrEqualTo((long) BUDGET_BLOCKS * BLOCK_BYTES);
    }
}
