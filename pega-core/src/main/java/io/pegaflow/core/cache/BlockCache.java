package io.pegaflow.core.cache;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The RAM index of sealed blocks: the RAM tier's residency and its eviction order.
 *
 * <p>Two implementations, chosen by {@code pega.cache.admission}: {@link #lru} (an access-ordered map: {@code lru},
 * the default, and {@code tinylfu} with our admission sketch in front) and {@link #caffeine} (Caffeine's W-TinyLFU
 * over the same keys). Both share one contract, which the engine relies on:
 *
 * <ul>
 *   <li>Ownership: the cache owns one reference of every resident block. Lookups that hand blocks out retain them
 *       for the caller; removals hand the cache's reference to an {@link EvictedBlocks}, which the caller releases
 *       once, outside the cache's lock.
 *   <li>Capacity is the pool's: the engine asks for {@link #evictColdest} batches when an allocation fails.
 *       Eviction skips blocks another holder still references (a lease, a queued load, a transfer lock): removing
 *       them would free nothing now and would make a block that is about to be loaded unfindable.
 *   <li>Only sealed blocks enter; blocks still being saved (staging) live in the engine's in-flight table.
 * </ul>
 *
 * <p>Thread-safe. Every operation is a short, bounded walk (a query prefix, one insert batch, one eviction batch).
 */
public sealed interface BlockCache extends CacheView permits LockedBlockCache {

    /** Plain LRU order behind {@code admission} ({@link AdmissionPolicy#ALWAYS} for none). */
    static BlockCache lru(AdmissionPolicy admission) {
        return new LruBlockCache(admission);
    }

    /**
     * Caffeine's W-TinyLFU as the policy, holding at most {@link TinyLfuBlockCache#TIER_SHARE} of a pool of
     * {@code poolBytes}. Blocks the policy evicts while inserting go to {@code onEvicted}, which must announce and
     * release them.
     */
    static BlockCache caffeine(long poolBytes, Consumer<EvictedBlocks> onEvicted) {
        return new TinyLfuBlockCache((long) (poolBytes * TinyLfuBlockCache.TIER_SHARE), onEvicted);
    }

    /** Membership only: no reordering, no frequency bump. */
    boolean contains(BlockKey key);

    /** Marks which keys are resident, under one lock acquisition; membership only. */
    @Override
    void markResident(List<BlockKey> keys, boolean[] resident);

    /**
     * Walks {@code keys} in order and stops at the first miss. Each hit counts as a use, is retained for the caller
     * and written to {@code out}.
     *
     * @return the number of leading hits
     */
    int prefix(List<BlockKey> keys, SealedBlock[] out);

    /** Looks up each key without prefix semantics (misses skipped); hits count as uses and are retained. */
    @Override
    void lookupEach(List<BlockKey> keys, BiConsumer<BlockKey, SealedBlock> sink);

    /**
     * Looks up every key independently (a membership query of a hybrid state group): {@code out[i]} is the block of
     * {@code keys[i]}, retained for the caller, or null on a miss. Each hit counts as a use.
     *
     * @return the number of hits
     */
    int each(List<BlockKey> keys, SealedBlock[] out);

    /**
     * Inserts a batch in order. For {@link InsertOutcome#INSERTED} the cache takes over the caller's reference; for the
     * other outcomes the caller keeps it.
     */
    void insertAll(List<BlockKey> keys, List<SealedBlock> blocks, InsertOutcome[] outcomes);

    /** Removes up to {@code max} of the coldest entries that no other holder references. */
    EvictedBlocks evictColdest(int max);

    /** Drains the whole index, referenced or not (the operator's cleanup). */
    EvictedBlocks evictAll();

    /** Visits resident keys in batches, without holding the lock while the consumer runs. */
    void forEachKeyBatch(int batchSize, Consumer<List<BlockKey>> consumer);

    @Override
    int size();

    /** The sum of the resident blocks' footprints. */
    @Override
    long residentBytes();
}
