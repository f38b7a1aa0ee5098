package io.pegaflow.core.engine;

import io.pegaflow.core.instance.Instance;
import io.pegaflow.core.lease.LeaseSummary;
import io.pegaflow.core.lease.LeaseTable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The engine's registrations as the operator sees them: instances, Sessions, leases and what the restore at start did.
 * Read-only and thread-safe; each call reads the live tables, so two calls may disagree while RPCs run.
 */
public final class EngineStatus {
    private final InstanceRegistry instances;
    private final SessionTable sessions;
    private final LeaseTable leases;
    private final DetachedInstances detached;
    private final RestorePath restore;

    EngineStatus(
            InstanceRegistry instances,
            SessionTable sessions,
            LeaseTable leases,
            DetachedInstances detached,
            RestorePath restore) {
        this.instances = instances;
        this.sessions = sessions;
        this.leases = leases;
        this.detached = detached;
        this.restore = restore;
    }

    /** Every registered instance with its devices, layers and layout, by id. */
    public List<InstanceSummary> instanceSummaries() {
        List<InstanceSummary> out = new ArrayList<>();
        for (String id : instances.ids()) {
            Instance instance = instances.get(id);
            if (instance != null) {
                out.add(InstanceSummary.of(instance, leases.sizeOf(id), detached.contains(id)));
            }
        }
        out.sort(Comparator.comparing(InstanceSummary::id));
        return out;
    }

    /** The live query leases, soonest to expire first. */
    public List<LeaseSummary> leaseSummaries() {
        return leases.summaries();
    }

    public int instanceCount() {
        return instances.size();
    }

    public int sessionCount() {
        return sessions.size();
    }

    /** Restored instances that no Session has adopted yet. */
    public int detachedCount() {
        return detached.size();
    }

    public List<String> detachedInstanceIds() {
        return detached.ids();
    }

    /** What the restore at start did ({@link RestoreReport#NONE} before it, or without a journal). */
    public RestoreReport lastRestore() {
        return restore.last();
    }
}
