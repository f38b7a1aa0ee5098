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
import org.junit.jupiter.api.Timeout;

/** RAM index semantics of the reference's read cache on real ref-counted blocks. */
@Timeout(30)
class BlockCacheTest {
    private static final int BLOCK_BYTES = 1024;

    private final PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(1 << 20));
    private final BlockCache cache = BlockCache.lru(AdmissionPolicy.ALWAYS);
    private final List<SealedBlock> outside = new ArrayList<>();

    @AfterEach
    void tearDown() {
        outside.forEach(SealedBlock::release);
        cache.evictAll().releaseAll();
        assertThat(pool.outstandingAllocations()).as("allocations leaked").isZero();
        pool.close();
    }

    private SealedBlock block() {
        PinnedAllocation allocation = pool.allocate(BLOCK_BYTES);
        SlotData slot = SlotData.contiguous(allocation, allocation.address(), BLOCK_BYTES);
        allocation.release();
        return new SealedBlock(new SlotData[] {slot});
    }

    private static BlockKey key(String namespace, int i) {
        return new BlockKey(namespace, new byte[] {7, (byte) i});
    }

    private static BlockKey key(int i) {
        return key("ns", i);
    }

    private void insert(int... ids) {
        List<BlockKey> keys = new ArrayList<>();
        List<SealedBlock> blocks = new ArrayList<>();
        for (int id : ids) {
            keys.add(key(id));
            blocks.add(block());
        }
        InsertOutcome[] outcomes = new InsertOutcome[ids.length];
        cache.insertAll(keys, blocks, outcomes);
        assertThat(outcomes).containsOnly(InsertOutcome.INSERTED);
    }

    /** Prefix lookup; hit references are handed back to {@link #outside} for release. */
    private int prefix(int... ids) {
        List<BlockKey> keys = new ArrayList<>();
        for (int id : ids) {
            keys.add(key(id));
        }
        SealedBlock[] out = new SealedBlock[ids.length];
        int hits = cache.prefix(keys, out);
        for (int i = 0; i < hits; i++) {
            outside.add(out[i]);
        }
        return hits;
    }

    @Test
    void shouldCountOnlyTheContiguousPrefix() {
        insert(0, 1, 2, 4);

        assertThat(prefix(0, 1, 2, 3, 4)).isEqualTo(3);
        assertThat(prefix(0, 3, 4)).isEqualTo(1);
        assertThat(prefix(3, 0, 1)).isZero();
        assertThat(prefix()).isZero();
    }

    @Test
    void shouldRetainEveryHitForTheCaller() {
        insert(0, 1);

        prefix(0, 1);

        assertThat(outside).hasSize(2).allSatisfy(b -> assertThat(b.refCount()).isEqualTo(2));
    }

    @Test
    void shouldIsolateNamespaces() {
        insert(0);
        SealedBlock[] out = new SealedBlock[1];

        assertThat(cache.prefix(List.of(key("other", 0)), out)).isZero();
        assertThat(cache.contains(key("other", 0))).isFalse();
        assertThat(cache.contains(key(0))).isTrue();
    }

    @Test
    void shouldNotTouchLruOrderOnMembershipChecks() {
        insert(0, 1);
        boolean[] resident = new boolean[2];

        cache.contains(key(0));
        cache.markResident(List.of(key(0), key(9)), resident);
        EvictedBlocks evicted = cache.evictColdest(1);

        assertThat(resident).containsExactly(true, false);
        assertThat(evicted.keys()).containsExactly(key(0));
        evicted.releaseAll();
    }

    @Test
    void shouldMoveHitsToMostRecentlyUsed() {
        insert(0, 1);

        prefix(0);
        outside.forEach(SealedBlock::release);
        outside.clear();
        EvictedBlocks evicted = cache.evictColdest(1);

        assertThat(evicted.keys()).containsExactly(key(1));
        evicted.releaseAll();
    }

    @Test
    void shouldNeverEvictABlockAnotherHolderReferences() {
        insert(0, 1, 2);
        prefix(0);

        EvictedBlocks evicted = cache.evictColdest(3);

        assertThat(evicted.keys()).containsExactly(key(1), key(2));
        assertThat(evicted.stillReferenced()).isZero();
        assertThat(cache.contains(key(0))).isTrue();
        assertThat(cache.size()).isEqualTo(1);
        evicted.releaseAll();
        assertThat(pool.outstandingAllocations()).isEqualTo(1);
    }

    @Test
    void shouldKeepTheFirstBlockOfAKey() {
        insert(0);
        SealedBlock duplicate = block();
        InsertOutcome[] outcomes = new InsertOutcome[1];

        cache.insertAll(List.of(key(0)), List.of(duplicate), outcomes);

        assertThat(outcomes).containsExactly(InsertOutcome.ALREADY_EXISTS);
        assertThat(cache.size()).isEqualTo(1);
        assertThat(cache.residentBytes()).isEqualTo(BLOCK_BYTES);
        duplicate.release();
    }

    @Test
    void shouldDrainEverythingAndCountHeldEntries() {
        insert(0, 1, 2);
        prefix(0, 1);

        EvictedBlocks all = cache.evictAll();

        assertThat(all.count()).isEqualTo(3);
        assertThat(all.footprintBytes()).isEqualTo(3L * BLOCK_BYTES);
        assertThat(all.stillReferenced()).isEqualTo(2);
        assertThat(cache.size()).isZero();
        assertThat(cache.residentBytes()).isZero();
        all.releaseAll();
        assertThat(pool.outstandingAllocations())
                .as("only the held blocks remain")
                .isEqualTo(2);
        EvictedBlocks again = cache.evictAll();
        assertThat(again.count()).isZero();
        assertThat(again.footprintBytes()).isZero();
    }

    @Test
    void shouldLookUpEachKeyWithoutPrefixSemantics() {
        insert(0, 2, 4);
        List<BlockKey> found = new ArrayList<>();

        cache.lookupEach(List.of(key(4), key(1), key(0), key(3), key(2)), (k, b) -> {
            found.add(k);
            outside.add(b);
        });

        assertThat(found).containsExactly(key(4), key(0), key(2));
    }
}
