package io.pegaflow.core.cache;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The RAM index of sealed blocks in LRU order, with an optional {@link AdmissionPolicy} in front ({@code
 * pega.cache.admission=lru}, the default).
 *
 * <p>Concurrency: one lock around an access-ordered {@link LinkedHashMap}. Every operation is a short, bounded walk
 * (a query prefix, one insert batch, one eviction batch), so a single lock keeps the order exact and is cheaper than a
 * concurrent map plus a separate order buffer at the query rates a sidecar sees (tens of thousands of lookups per
 * request, a few requests per millisecond).
 *
 * <p>Capacity: the map is unbounded. Memory pressure is handled by the engine: when the pool cannot satisfy an
 * allocation it asks for {@link #evictColdest} batches. Eviction skips entries that another holder still references
 * (a lease, a queued load): removing them would free nothing now and would make a block that is about to be loaded
 * unfindable (the reference v0.22.4 evicts them anyway; upstream fixed it later).
 *
 * <p>Ownership: the cache owns one reference of every resident block. Lookups that hand blocks out retain them for
 * the caller.
 */
final class LruBlockCache implements BlockCache {
    private final ReentrantLock lock = new ReentrantLock();
    private final LinkedHashMap<BlockKey, SealedBlock> map = new LinkedHashMap<>(1024, 0.75f, true);
    private final AdmissionPolicy admission;
    private long residentBytes;

    LruBlockCache(AdmissionPolicy admission) {
        this.admission = admission;
    }

    @Override
    public boolean contains(BlockKey key) {
        lock.lock();
        try {
            return map.containsKey(key);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void markResident(List<BlockKey> keys, boolean[] resident) {
        lock.lock();
        try {
            for (int i = 0; i < keys.size(); i++) {
                resident[i] = map.containsKey(keys.get(i));
            }
        } finally {
            lock.unlock();
        }
    }

    /** Every hit moves to MRU. */
    @Override
    public int prefix(List<BlockKey> keys, SealedBlock[] out) {
        lock.lock();
        try {
            int n = keys.size();
            for (int i = 0; i < n; i++) {
                BlockKey key = keys.get(i);
                SealedBlock block = map.get(key);
                if (block == null) {
                    return i;
                }
                admission.recordAccess(key);
                block.retain();
                out[i] = block;
            }
            return n;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int each(List<BlockKey> keys, SealedBlock[] out) {
        lock.lock();
        try {
            int hits = 0;
            for (int i = 0; i < keys.size(); i++) {
                BlockKey key = keys.get(i);
                SealedBlock block = map.get(key);
                if (block != null) {
                    admission.recordAccess(key);
                    block.retain();
                    out[i] = block;
                    hits++;
                }
            }
            return hits;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void lookupEach(List<BlockKey> keys, BiConsumer<BlockKey, SealedBlock> sink) {
        lock.lock();
        try {
            for (BlockKey key : keys) {
                SealedBlock block = map.get(key);
                if (block != null) {
                    admission.recordAccess(key);
                    block.retain();
                    sink.accept(key, block);
                }
            }
        } finally {
            lock.unlock();
        }
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

    /** In LRU order. */
    @Override
    public void forEachKeyBatch(int batchSize, Consumer<List<BlockKey>> consumer) {
        List<BlockKey> snapshot;
        lock.lock();
        try {
            snapshot = List.copyOf(map.keySet());
        } finally {
            lock.unlock();
        }
        for (int from = 0; from < snapshot.size(); from += batchSize) {
            consumer.accept(snapshot.subList(from, Math.min(snapshot.size(), from + batchSize)));
        }
    }

    @Override
    public int size() {
        lock.lock();
        try {
            return map.size();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long residentBytes() {
        lock.lock();
        try {
            return residentBytes;
        } finally {
            lock.unlock();
        }
    }
}
