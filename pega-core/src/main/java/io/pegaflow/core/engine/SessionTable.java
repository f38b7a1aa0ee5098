package io.pegaflow.core.engine;

import java.util.HashMap;
import java.util.Map;

/**
 * The scheduler's liveness Sessions (spec/engine-api.md §5.7): one entry per instance, replaced by a newer Session;
 * only the close of the current one tears the instance down.
 */
final class SessionTable {
    private record Entry(long token, String namespace, long tpSize, long worldSize) {}

    private final Map<String, Entry> entries = new HashMap<>();
    private long nextToken;

    synchronized long open(String instanceId, String namespace, long tpSize, long worldSize) {
        long token = ++nextToken;
        entries.put(instanceId, new Entry(token, namespace, tpSize, worldSize));
        return token;
    }

    /** Removes the entry when {@code token} is current; returns whether the caller must clean up. */
    synchronized boolean close(String instanceId, long token) {
        Entry entry = entries.get(instanceId);
        if (entry == null || entry.token() != token) {
            return false;
        }
        entries.remove(instanceId);
        return true;
    }

    synchronized int size() {
        return entries.size();
    }
}
