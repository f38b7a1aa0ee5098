package io.pegaflow.core.engine;

import io.pegaflow.kernel.agent.NanoClock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Instances restored from the registration journal that no Session has claimed yet, with the time of their last RPC
 * on the engine's clock. An entry leaves when a Session adopts the instance, a new registration replaces it, it is
 * unregistered, or it stays idle past the timeout. Thread-safe; {@link #touch} is one map read while none are
 * detached, which is the steady state.
 */
final class DetachedInstances {
    private final Map<String, AtomicLong> lastUse = new ConcurrentHashMap<>();
    private final NanoClock clock;

    DetachedInstances(NanoClock clock) {
        this.clock = clock;
    }

    void add(String instanceId) {
        lastUse.put(instanceId, new AtomicLong(clock.nanoTime()));
    }

    /** Records an RPC of the instance, when it is detached. */
    void touch(String instanceId) {
        if (lastUse.isEmpty()) {
            return;
        }
        AtomicLong t = lastUse.get(instanceId);
        if (t != null) {
            t.set(clock.nanoTime());
        }
    }

    boolean contains(String instanceId) {
        return lastUse.containsKey(instanceId);
    }

    boolean remove(String instanceId) {
        return lastUse.remove(instanceId) != null;
    }

    /** The detached instances without an RPC for at least {@code timeoutNanos}. */
    List<String> idle(long timeoutNanos) {
        long now = clock.nanoTime();
        List<String> out = new ArrayList<>();
        lastUse.forEach((id, t) -> {
            if (now - t.get() >= timeoutNanos) {
                out.add(id);
            }
        });
        return out;
    }

    boolean isIdle(String instanceId, long timeoutNanos) {
        AtomicLong t = lastUse.get(instanceId);
        return t != null && clock.nanoTime() - t.get() >= timeoutNanos;
    }

    int size() {
        return lastUse.size();
    }

    List<String> ids() {
        return new ArrayList<>(lastUse.keySet());
    }
}
