package io.pegaflow.core.cache;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The lookups every index shares, under one lock. A policy supplies what differs: how a hit is recorded ({@link
 * #hitLocked}), how membership is tested without recording one ({@link #containsLocked}), and the key order it
 * announces in ({@link #keysLocked}).
 *
 * <p>Why one lock and not the map's own concurrency: a lookup's retain and an eviction's "is anyone else holding it?"
 * check must not interleave, or a block leased between the check and the removal would be removed while leased. Every
 * operation is a short, bounded walk (a query prefix, one insert batch, one eviction batch), so the lock is held
 * briefly at the rates a sidecar sees.
 */
abstract sealed class LockedBlockCache implements BlockCache permits LruBlockCache, TinyLfuBlockCache {
    protected final ReentrantLock lock = new ReentrantLock();

    /** Bytes of the resident blocks; guarded by {@link #lock}, kept by the subclass's insert and removal paths. */
    protected long residentBytes;

    /** The resident block for key, its hit recorded by the policy; null on a miss. Under the lock. */
    abstract @Nullable SealedBlock hitLocked(BlockKey key);

    /** Membership without recording a hit. Under the lock. */
    abstract boolean containsLocked(BlockKey key);

    /** The resident keys in the order the policy announces them. Under the lock; the caller copies. */
    abstract Collection<BlockKey> keysLocked();

    @Override
    public final boolean contains(BlockKey key) {
        lock.lock();
        try {
            return containsLocked(key);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public final void markResident(List<BlockKey> keys, boolean[] resident) {
        lock.lock();
        try {
            for (int i = 0; i < keys.size(); i++) {
                resident[i] = containsLocked(keys.get(i));
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public final int prefix(List<BlockKey> keys, SealedBlock[] out) {
        lock.lock();
        try {
            int n = keys.size();
            for (int i = 0; i < n; i++) {
                SealedBlock block = hitLocked(keys.get(i));
                if (block == null) {
                    return i;
                }
                block.retain();
                out[i] = block;
            }
            return n;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public final int each(List<BlockKey> keys, SealedBlock[] out) {
        lock.lock();
        try {
            int hits = 0;
            for (int i = 0; i < keys.size(); i++) {
                SealedBlock block = hitLocked(keys.get(i));
                if (block != null) {
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
    public final void lookupEach(List<BlockKey> keys, BiConsumer<BlockKey, SealedBlock> sink) {
        lock.lock();
        try {
            for (BlockKey key : keys) {
                SealedBlock block = hitLocked(key);
                if (block != null) {
                    block.retain();
                    sink.accept(key, block);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** A snapshot taken under the lock, handed out in batches after it (the consumers announce keys over RPC). */
    @Override
    public final void forEachKeyBatch(int batchSize, Consumer<List<BlockKey>> consumer) {
        List<BlockKey> snapshot;
        lock.lock();
        try {
            snapshot = List.copyOf(keysLocked());
        } finally {
            lock.unlock();
        }
        for (int from = 0; from < snapshot.size(); from += batchSize) {
            consumer.accept(snapshot.subList(from, Math.min(snapshot.size(), from + batchSize)));
        }
    }

    @Override
    public final int size() {
        lock.lock();
        try {
            return keysLocked().size();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public final long residentBytes() {
        lock.lock();
        try {
            return residentBytes;
        } finally {
            lock.unlock();
        }
    }
}
