package io.pegaflow.core.engine;

import io.pegaflow.core.instance.Principal;
import java.util.HashMap;
import java.util.Map;

/**
 * The scheduler's liveness Sessions: one entry per instance, replaced by a newer Session of the same principal; only
 * the close of the current one tears the instance down. A Session of another principal for a live entry is refused
 * (decision 0011, defect 6): otherwise anyone could open one and cancel it to tear the instance down.
 */
final class SessionTable {
    private record Entry(long token, String namespace, long tpSize, long worldSize, Principal principal) {}

    private final Map<String, Entry> entries = new HashMap<>();
    private long nextToken;

    /** @throws io.pegaflow.core.error.EngineException PERMISSION_DENIED when another principal's Session is live */
    synchronized long open(String instanceId, String namespace, long tpSize, long worldSize, Principal principal) {
        requireOwnerOrAbsent(instanceId, principal);
        long token = ++nextToken;
        entries.put(instanceId, new Entry(token, namespace, tpSize, worldSize, principal));
        return token;
    }

    /** Refuses {@code principal} when another principal holds the live Session of {@code instanceId}. */
    synchronized void requireOwnerOrAbsent(String instanceId, Principal principal) {
        Entry entry = entries.get(instanceId);
        if (entry != null && !entry.principal().equals(principal)) {
            throw InstanceRegistry.notOwner(instanceId);
        }
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
