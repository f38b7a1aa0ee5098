package io.pegaflow.core.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The RAM index with Caffeine's W-TinyLFU as its policy ({@code pega.cache.admission=caffeine}): a Caffeine cache of
 * block keys <em>is</em> the index, so its window, probation and protected segments, hill climber and frequency
 * sketch decide what stays, and nothing shadows it.
 *
 * <ul>
 *   <li>Weight = the block's pool bytes ({@link SealedBlock#footprintBytes()}, padding included); maximum weight =
 *       what the tier may hold, {@link #TIER_SHARE} of the pool. The rest of the pool is room for Saves in flight.
 *       The budget must bind below the pool: W-TinyLFU judges a newcomer against its probation victim only while
 *       the cache is over its maximum; a cache that is never full passes every block from the window into probation
 *       unjudged and then evicts probation in LRU order, which keeps no hot set through a scan (measured, see the
 *       decision record).
 *   <li>So Caffeine evicts inside {@link #insertAll}, on the sealing worker's thread: a newcomer it turns away at once
 *       is reported {@link InsertOutcome#REJECTED}; the other victims go to the engine's eviction sink (announced,
 *       counted, released) after the lock. When the pool still cannot fit an allocation, the reclaimer's
 *       {@link #evictColdest} takes the coldest entries in the policy's own order ({@code policy().eviction()
 *       .coldest(...)}: window and probation by frequency, then protected).
 *   <li>The removal listener is the one place the cache's reference leaves the policy, for every cause; the
 *       executor is {@code Runnable::run}, so maintenance and the listener run inside the call that caused them and a
 *       call returns with every removed block accounted for: the index's bytes and the policy's weight agree.
 *   <li>Blocks another holder references (a lease, a queued load, a transfer lock) are never victims: the reclaim
 *       path skips them, and one Caffeine picks at insert time is put back at once.
 * </ul>
 *
 * <p>Concurrency: {@link LockedBlockCache}'s one lock around every operation; it also keeps the listener's
 * bookkeeping on the thread that holds it, so Caffeine's own lock is never contended.
 *
 * <p>Caffeine's work, and where it runs: a hit costs a hash lookup and an offer to Caffeine's read buffer (the
 * reordering is applied in batches when the buffer fills, not per hit); membership checks ({@link #contains},
 * {@link #markResident}) use the map view, which records nothing; inserts and their evictions run on the sealing
 * worker and the tier fetches, not on a request thread; the victim walk runs only after an allocation failed. See
 * {@code docs/decisions/0026-caffeine-tinylfu-policy.md}.
 */
final class TinyLfuBlockCache extends LockedBlockCache {
    /** Put-back rounds for referenced victims before the batch's newcomers make way. */
    static final int PUT_BACK_ROUNDS = 4;

    /** The share of the pool the index may hold; the rest is room for Saves in flight (measured: 7/8). */
    static final double TIER_SHARE = 0.875;

    private final Cache<BlockKey, SealedBlock> cache;
    private final ConcurrentMap<BlockKey, SealedBlock> map;
    private final Policy.Eviction<BlockKey, SealedBlock> eviction;
    private final Consumer<EvictedBlocks> onEvicted;
    // guarded by lock; the removal listener runs inline (Runnable::run) under it
    private List<Map.Entry<BlockKey, SealedBlock>> removed = new ArrayList<>();
    private long referencedEvictions;

    TinyLfuBlockCache(long maximumBytes, Consumer<EvictedBlocks> onEvicted) {
        if (maximumBytes <= 0) {
            throw new IllegalArgumentException("caffeine cache: maximum " + maximumBytes + " bytes (expected: > 0)");
        }
        this.onEvicted = onEvicted;
        this.cache = Caffeine.newBuilder()
                .maximumWeight(maximumBytes)
                .weigher((BlockKey key, SealedBlock block) -> weightOf(block))
                .executor(Runnable::run)
                .removalListener(this::onRemoval)
                .build();
        this.map = cache.asMap();
        this.eviction = cache.policy().eviction().orElseThrow();
    }

    /** A block's weight: its pool bytes; a block of 2 GiB or more cannot be weighed exactly and is refused. */
    private static int weightOf(SealedBlock block) {
        return Math.toIntExact(block.footprintBytes());
    }

    private void onRemoval(@Nullable BlockKey key, @Nullable SealedBlock block, RemovalCause cause) {
        if (key == null || block == null) {
            return; // strong keys and values: Caffeine never collects them
        }
        residentBytes -= block.footprintBytes();
        removed.add(Map.entry(key, block));
    }

    /** What the removal listener collected since the last call; the caller owns the references. Under the lock. */
    private List<Map.Entry<BlockKey, SealedBlock>> takeRemovedEntries() {
        if (removed.isEmpty()) {
            return List.of(); // the common insert: nothing left the policy, nothing to allocate
        }
        List<Map.Entry<BlockKey, SealedBlock>> out = removed;
        removed = new ArrayList<>();
        return out;
    }

    private EvictedBlocks takeRemoved() {
        EvictedBlocks out = new EvictedBlocks();
        for (Map.Entry<BlockKey, SealedBlock> e : takeRemovedEntries()) {
            out.add(e.getKey(), e.getValue());
        }
        return out;
    }

    /** A hit is offered to Caffeine's read buffer (the policy reorders in batches). */
    @Override
    @Nullable
    SealedBlock hitLocked(BlockKey key) {
        return cache.getIfPresent(key);
    }

    /** The map view: records nothing. */
    @Override
    boolean containsLocked(BlockKey key) {
        return map.containsKey(key);
    }

    /** In the map's order (no policy walk: the consumers announce keys, order does not matter to them). */
    @Override
    Collection<BlockKey> keysLocked() {
        return map.keySet();
    }

    /**
     * Inserts in order; Caffeine settles each insert in the call. A block W-TinyLFU turns away at once (its frequency
     * below the probation victim's) is reported {@link InsertOutcome#REJECTED} and stays the caller's; the other
     * blocks it evicted go to the eviction sink, after the lock. Victims another holder references are put back.
     */
    @Override
    public void insertAll(List<BlockKey> keys, List<SealedBlock> blocks, InsertOutcome[] outcomes) {
        EvictedBlocks evicted = new EvictedBlocks();
        lock.lock();
        try {
            for (int i = 0; i < keys.size(); i++) {
                SealedBlock block = blocks.get(i);
                if (map.putIfAbsent(keys.get(i), block) == null) {
                    residentBytes += block.footprintBytes();
                    outcomes[i] = InsertOutcome.INSERTED;
                } else {
                    outcomes[i] = InsertOutcome.ALREADY_EXISTS;
                }
            }
            List<Map.Entry<BlockKey, SealedBlock>> victims = keepReferenced(keys, blocks, outcomes);
            if (!victims.isEmpty()) {
                sortOut(keys, blocks, outcomes, victims, evicted);
            }
        } finally {
            lock.unlock();
        }
        if (evicted.count() > 0) {
            onEvicted.accept(evicted);
        }
    }

    /**
     * Collects what Caffeine removed during this insert batch and puts back the victims another holder references (a
     * lease, a load, a transfer lock: never victims); returns the others. A put-back enters the window as a newcomer
     * and can lose the frequency contest again, so after {@link #PUT_BACK_ROUNDS} rounds the batch's own newcomers
     * make way instead (they come back as victims and become {@code REJECTED}). Only if none is left and referenced
     * blocks alone outweigh the budget does one stay out of the index (its memory held by its holders) and is
     * counted.
     */
    private List<Map.Entry<BlockKey, SealedBlock>> keepReferenced(
            List<BlockKey> keys, List<SealedBlock> blocks, InsertOutcome[] outcomes) {
        List<Map.Entry<BlockKey, SealedBlock>> out = new ArrayList<>();
        List<Map.Entry<BlockKey, SealedBlock>> round = takeRemovedEntries();
        int newcomer = keys.size() - 1;
        for (int r = 0; !round.isEmpty(); r++) {
            List<Map.Entry<BlockKey, SealedBlock>> referenced = new ArrayList<>();
            for (Map.Entry<BlockKey, SealedBlock> e : round) {
                (e.getValue().refCount() > 1 ? referenced : out).add(e);
            }
            if (referenced.isEmpty()) {
                break;
            }
            if (r >= PUT_BACK_ROUNDS) {
                for (int made = 0; made < referenced.size() && newcomer >= 0; newcomer--) {
                    SealedBlock block = blocks.get(newcomer);
                    if (outcomes[newcomer] == InsertOutcome.INSERTED
                            && block.refCount() == 1
                            && map.remove(keys.get(newcomer), block)) {
                        made++;
                    }
                }
                if (newcomer < 0 && r >= PUT_BACK_ROUNDS + keys.size()) {
                    referencedEvictions += referenced.size();
                    out.addAll(referenced);
                    out.addAll(takeRemovedEntries());
                    break;
                }
            }
            for (Map.Entry<BlockKey, SealedBlock> e : referenced) {
                if (map.putIfAbsent(e.getKey(), e.getValue()) == null) {
                    residentBytes += e.getValue().footprintBytes();
                } else {
                    out.add(e); // cannot happen under the lock: the key was just removed; keep the reference moving
                }
            }
            round = takeRemovedEntries();
        }
        return out;
    }

    /** Victims inserted by this very call become {@code REJECTED} (the caller keeps them); the rest are evicted. */
    private static void sortOut(
            List<BlockKey> keys,
            List<SealedBlock> blocks,
            InsertOutcome[] outcomes,
            List<Map.Entry<BlockKey, SealedBlock>> victims,
            EvictedBlocks evicted) {
        Map<BlockKey, Integer> inserted = new HashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            if (outcomes[i] == InsertOutcome.INSERTED) {
                inserted.put(keys.get(i), i);
            }
        }
        for (Map.Entry<BlockKey, SealedBlock> victim : victims) {
            Integer i = inserted.get(victim.getKey());
            if (i != null && blocks.get(i) == victim.getValue()) {
                outcomes[i] = InsertOutcome.REJECTED;
            } else {
                evicted.add(victim.getKey(), victim.getValue());
            }
        }
    }

    /**
     * The reclaim path: the pool still cannot fit an allocation (Saves in flight took more than the headroom). The
     * coldest unreferenced entries in the policy's own order go.
     */
    @Override
    public EvictedBlocks evictColdest(int max) {
        lock.lock();
        try {
            // The snapshot runs under Caffeine's eviction lock after its maintenance, so the order is current; the
            // removals happen after it, through the map, so the listener sees them like any other removal.
            List<Map.Entry<BlockKey, SealedBlock>> victims =
                    eviction.coldest(entries -> entries.filter(e -> e.getValue().refCount() == 1)
                            .limit(max)
                            .<Map.Entry<BlockKey, SealedBlock>>map(e -> Map.entry(e.getKey(), e.getValue()))
                            .toList());
            for (Map.Entry<BlockKey, SealedBlock> victim : victims) {
                map.remove(victim.getKey(), victim.getValue());
            }
            return takeRemoved();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public EvictedBlocks evictAll() {
        lock.lock();
        try {
            cache.invalidateAll();
            return takeRemoved();
        } finally {
            lock.unlock();
        }
    }

    /** The policy's own weighted size, after its pending maintenance: equals {@link #residentBytes()}. */
    long policyWeightedBytes() {
        lock.lock();
        try {
            cache.cleanUp();
            return eviction.weightedSize().orElseThrow();
        } finally {
            lock.unlock();
        }
    }

    /** Referenced victims left out of the index; 0 unless referenced blocks alone outweigh the budget. */
    long referencedEvictions() {
        lock.lock();
        try {
            return referencedEvictions;
        } finally {
            lock.unlock();
        }
    }
}
