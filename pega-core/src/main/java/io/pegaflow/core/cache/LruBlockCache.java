package io.pegaflow.core.cache;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The RAM index of sealed blocks in LRU order, with an optional {@link AdmissionPolicy} in front ({@code
 * pega.cache.admission=lru}, the default).
 *
 * <p>Concurrency: {@link LockedBlockCache}'s lock around an access-ordered {@link LinkedHashMap}; one lock keeps the
 * order exact and is cheaper than a concurrent map plus a separate order buffer at the query rates a sidecar sees
 * (tens of thousands of lookups per request, a few requests per millisecond).
 *
 * <p>Capacity: the map is unbounded. Memory pressure is handled by the engine: when the pool cannot satisfy an
 * allocation it asks for {@link #evictColdest} batches. Eviction skips entries that another holder still references
 * (a lease, a queued load): removing them would free nothing now and would make a block that is about to be loaded
 * unfindable (the reference v0.22.4 evicts them anyway; upstream fixed it later).
 *
 * <p>Ownership: the cache owns one reference of every resident block. Lookups that hand blocks out retain them for
 * the caller.
 */
final class LruBlockCache extends LockedBlockCache {
    private final LinkedHashMap<BlockKey, SealedBlock> map = new LinkedHashMap<>(1024, 0.75f, true);
    private final AdmissionPolicy admission;

    LruBlockCache(AdmissionPolicy admission) {
        this.admission = admission;
    }

    /** Every hit moves to MRU and is shown to the admission policy. */
    @Override
    @Nullable
    SealedBlock hitLocked(BlockKey key) {
        SealedBlock block = map.get(key);
        if (block != null) {
            admission.recordAccess(key);
        }
        return block;
    }

    @Override
    boolean containsLocked(BlockKey key) {
        return map.containsKey(key);
    }

    /** In LRU order. */
    @Override
    Collection<BlockKey> keysLocked() {
        return map.keySet();
    }

    @Override
    public void insertAll(List<BlockKey> keys, List<SealedBlock> blocks, InsertOutcome[] outcomes) {
        lock.lock();
        try {
            for (int i = 0; i < keys.size(); i++) {
                outcomes[i] = insertLocked(keys.get(i), blocks.get(i));
            }
        } finally {
            lock.unlock();
        }
    }

    private InsertOutcome insertLocked(BlockKey key, SealedBlock block) {
        if (map.containsKey(key)) {
            return InsertOutcome.ALREADY_EXISTS;
        }
        if (admission != AdmissionPolicy.ALWAYS) {
            BlockKey victim = map.isEmpty() ? null : map.keySet().iterator().next();
            if (!admission.admit(key, victim)) {
                return InsertOutcome.REJECTED;
            }
        }
        map.put(key, block);
        residentBytes += block.footprintBytes();
        return InsertOutcome.INSERTED;
    }

    /** Coldest = the LRU end. */
    @Override
    public EvictedBlocks evictColdest(int max) {
        EvictedBlocks out = new EvictedBlocks();
        lock.lock();
        try {
            Iterator<Map.Entry<BlockKey, SealedBlock>> it = map.entrySet().iterator();
            while (it.hasNext() && out.count() < max) {
                Map.Entry<BlockKey, SealedBlock> e = it.next();
                if (e.getValue().refCount() > 1) {
                    continue;
                }
                it.remove();
                residentBytes -= e.getValue().footprintBytes();
                out.add(e.getKey(), e.getValue());
            }
        } finally {
            lock.unlock();
        }
        return out;
    }

    @Override
    public EvictedBlocks evictAll() {
        EvictedBlocks out = new EvictedBlocks();
        lock.lock();
        try {
            for (Map.Entry<BlockKey, SealedBlock> e : map.entrySet()) {
                out.add(e.getKey(), e.getValue());
            }
            map.clear();
            residentBytes = 0;
        } finally {
            lock.unlock();
        }
        return out;
    }
}
