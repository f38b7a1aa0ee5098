package io.pegaflow.core.engine;

import io.pegaflow.kernel.agent.NanoClock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Re-opens the registrations a previous process journaled, before the server takes RPCs. Each instance is restored
 * whole or not at all: one whose memory is gone (shm unlinked, exporting process exited, IPC handle invalid, device
 * absent) is dropped with one log line naming it, and its journal entry removed. Restored instances are detached until
 * a Session adopts them or a registration replaces them.
 */
final class RestorePath {
    private static final Logger LOG = LoggerFactory.getLogger(RestorePath.class);

    private final RegisterPath registerPath;
    private final DetachedInstances detached;
    private final NanoClock clock;
    /** Ends a partly restored instance and removes its journal entry. */
    private final Consumer<String> drop;

    private volatile RestoreReport last = RestoreReport.NONE;

    RestorePath(RegisterPath registerPath, DetachedInstances detached, NanoClock clock, Consumer<String> drop) {
        this.registerPath = registerPath;
        this.detached = detached;
        this.clock = clock;
        this.drop = drop;
    }

    RestoreReport restore(List<RegisterCommand> journaled) {
        long start = clock.nanoTime();
        Map<String, List<RegisterCommand>> byInstance = new LinkedHashMap<>();
        Map<String, Set<Integer>> devicesSeen = new HashMap<>();
        for (RegisterCommand c : journaled) {
            // A journaled registration whose device was already journaled was one the engine refused after
            // journaling it (a concurrent duplicate): the first one stands.
            if (devicesSeen
                    .computeIfAbsent(c.instanceId(), k -> new HashSet<>())
                    .add(c.deviceId())) {
                byInstance
                        .computeIfAbsent(c.instanceId(), k -> new ArrayList<>())
                        .add(c);
            }
        }
        List<String> restored = new ArrayList<>();
        List<String> dropped = new ArrayList<>();
        int layers = 0;
        for (Map.Entry<String, List<RegisterCommand>> e : byInstance.entrySet()) {
            String id = e.getKey();
            try {
                int n = 0;
                for (RegisterCommand c : e.getValue()) {
                    registerPath.register(c, false);
                    n += c.layerNames().size();
                }
                detached.add(id);
                restored.add(id);
                layers += n;
            } catch (RuntimeException failure) {
                drop.accept(id);
                dropped.add(id);
                LOG.warn(
                        "journaled registration of instance {} dropped, its memory is gone or refused: {}",
                        id,
                        failure.getMessage());
            }
        }
        RestoreReport report = new RestoreReport(restored, dropped, layers, clock.nanoTime() - start);
        last = report;
        return report;
    }

    /** What the last restore did ({@link RestoreReport#NONE} before it). */
    RestoreReport last() {
        return last;
    }
}
