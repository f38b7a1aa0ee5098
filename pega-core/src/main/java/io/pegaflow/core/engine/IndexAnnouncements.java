package io.pegaflow.core.engine;

import io.pegaflow.core.block.BlockKey;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Tells the engine's {@link BlockIndexListener}s what became findable and what stopped being findable, grouped by
 * namespace (one list per call, as the listeners expect). With no listener every call returns at once, without
 * building hash lists. Immutable; called from the sealing thread, eviction paths and re-announcement.
 */
final class IndexAnnouncements {
    private final List<BlockIndexListener> listeners;

    IndexAnnouncements(List<BlockIndexListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    boolean isEmpty() {
        return listeners.isEmpty();
    }

    /** Blocks of one namespace just sealed into the RAM index. */
    void sealed(String namespace, List<BlockKey> keys) {
        if (listeners.isEmpty()) {
            return; // nobody to announce to: skip the per-block hash list
        }
        List<byte[]> hashes = new ArrayList<>(keys.size());
        for (BlockKey key : keys) {
            hashes.add(key.hash());
        }
        for (BlockIndexListener l : listeners) {
            l.onSealed(namespace, hashes);
        }
    }

    /** Blocks just removed from the RAM index, of any namespaces. */
    void evicted(Iterable<BlockKey> keys) {
        if (listeners.isEmpty()) {
            return;
        }
        byNamespace(keys).forEach((namespace, hashes) -> {
            for (BlockIndexListener l : listeners) {
                l.onEvicted(namespace, hashes);
            }
        });
    }

    /** The hashes of {@code keys} per namespace, namespaces in first-seen order. */
    static Map<String, List<byte[]>> byNamespace(Iterable<BlockKey> keys) {
        Map<String, List<byte[]>> out = new LinkedHashMap<>();
        for (BlockKey key : keys) {
            out.computeIfAbsent(key.namespace(), k -> new ArrayList<>()).add(key.hash());
        }
        return out;
    }
}
