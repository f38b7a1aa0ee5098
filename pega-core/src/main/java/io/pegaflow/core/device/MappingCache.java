package io.pegaflow.core.device;

import io.pegaflow.core.memory.RefCount;
import java.lang.invoke.MethodHandles;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One mapping per distinct handle, shared and reference counted: the host backend's {@code /dev/shm} mappings and the
 * CUDA backend's IPC mappings. Every layer registered in the same underlying allocation holds one reference on one
 * {@link Entry}; the last {@link Entry#release()} closes the mapping exactly once.
 *
 * <p>Close before reopen: a mapping whose last reference is gone is always closed before the same key is opened
 * again (an IPC handle must not be opened twice in one process), because both happen under the cache's lock. The
 * reference count itself is the shared {@link RefCount}, so a layer's release never waits for the lock unless it is
 * the last one.
 *
 * <p>Thread-safe. {@code open} and {@code close} run under the cache's lock, so they must not call back into it.
 *
 * @param <K> the handle's identity (an shm name and inode, an IPC handle)
 * @param <M> the opened mapping (its address and size)
 */
public final class MappingCache<K, M> {
    /** Opens the mapping of a key; may throw, and then nothing is cached. */
    @FunctionalInterface
    public interface Opener<K, M> {
        M open(K key);
    }

    /** Closes a mapping. Runs once per mapping; if it throws, the mapping is forgotten all the same. */
    @FunctionalInterface
    public interface Closer<M> {
        void close(M mapping);
    }

    private final Opener<K, M> opener;
    private final Closer<M> closer;
    private final Map<K, Entry<K, M>> entries = new HashMap<>(); // guarded by this

    public MappingCache(Opener<K, M> opener, Closer<M> closer) {
        this.opener = opener;
        this.closer = closer;
    }

    /** One open mapping and its holders' count. */
    public static final class Entry<K, M> {
        private static final RefCount REFS = RefCount.of(MethodHandles.lookup(), Entry.class, "refs", "mapping");

        private final MappingCache<K, M> cache;
        private final K key;
        private final M mapping;
        private boolean closed; // guarded by cache

        @SuppressWarnings("unused") // accessed through REFS
        private volatile int refs = 1;

        private Entry(MappingCache<K, M> cache, K key, M mapping) {
            this.cache = cache;
            this.key = key;
            this.mapping = mapping;
        }

        public M mapping() {
            return mapping;
        }

        /** Gives one holder's reference back; the last one closes the mapping. Exactly once per acquire. */
        public void release() {
            if (REFS.release(this)) {
                cache.closeDead(this);
            }
        }

        @Override
        public String toString() {
            return "mapping " + key;
        }
    }

    /**
     * The mapping of {@code key} with one more reference: the open one, or a new one from the opener.
     *
     * @throws RuntimeException whatever the opener throws (nothing is cached then)
     */
    public synchronized Entry<K, M> acquire(K key) {
        Entry<K, M> existing = entries.get(key);
        if (existing != null) {
            if (Entry.REFS.tryRetain(existing)) {
                return existing;
            }
            closeDead(existing); // its last holder is on the way to closing it: do it now, before reopening
        }
        Entry<K, M> fresh = new Entry<>(this, key, opener.open(key));
        entries.put(key, fresh);
        return fresh;
    }

    private synchronized void closeDead(Entry<K, M> entry) {
        if (entry.closed) {
            return;
        }
        entry.closed = true;
        entries.remove(entry.key, entry);
        closer.close(entry.mapping);
    }

    /** Distinct mappings open now. */
    public synchronized int size() {
        return entries.size();
    }

    /**
     * Closes every mapping still open, whoever holds it (the backend is closing after its users were told to
     * stop); later releases of those entries do nothing.
     *
     * @return how many were still open
     */
    public synchronized int closeAll() {
        List<Entry<K, M>> open = new ArrayList<>(entries.values());
        for (Entry<K, M> e : open) {
            closeDead(e);
        }
        return open.size();
    }
}
