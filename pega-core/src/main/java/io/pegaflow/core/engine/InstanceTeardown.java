package io.pegaflow.core.engine;

import io.pegaflow.core.instance.DeviceContext;
import io.pegaflow.core.instance.Instance;
import io.pegaflow.core.lease.LeaseTable;
import io.pegaflow.core.tier.PrefetchTable;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ending instances: everything an instance owns (device contexts, leases, prefetches, side registrations, its
 * detached entry and, unless the server is shutting down, its journal entry) goes with it, whoever ends it (Unregister,
 * its Session, the operator, a replacing registration or the detached idle timeout).
 */
final class InstanceTeardown {
    private static final Logger LOG = LoggerFactory.getLogger(InstanceTeardown.class);

    private final InstanceRegistry instances;
    private final LeaseTable leases;
    private final PrefetchTable prefetch;
    private final RegistrationLog registrationLog;
    private final RegistrationBudget budget;
    private final DetachedInstances detached;
    private final SideRegistrations side;
    private final long detachedIdleNanos;
    /** Serialises ending a detached instance with a registration that replaces it (see {@link #replaceDetached}). */
    private final Object detachLock = new Object();

    InstanceTeardown(
            InstanceRegistry instances,
            LeaseTable leases,
            PrefetchTable prefetch,
            RegistrationLog registrationLog,
            RegistrationBudget budget,
            DetachedInstances detached,
            SideRegistrations side,
            long detachedIdleNanos) {
        this.instances = instances;
        this.leases = leases;
        this.prefetch = prefetch;
        this.registrationLog = registrationLog;
        this.budget = budget;
        this.detached = detached;
        this.side = side;
        this.detachedIdleNanos = detachedIdleNanos;
    }

    /**
     * Removes an instance and everything it owns; returns the layer mappings closed, or -1 if it did not exist. With
     * {@code journal} its end is journaled (not at shutdown: the workers outlive the server and a restart restores
     * them). Its detached entry, if any, goes last: see {@link #replaceDetached}.
     */
    int end(String instanceId, boolean journal) {
        Instance instance = instances.remove(instanceId);
        leases.releaseInstance(instanceId);
        prefetch.dropInstance(instanceId);
        if (journal) {
            registrationLog.removed(instanceId);
        }
        int tensors = -1;
        if (instance != null) {
            tensors = 0;
            for (DeviceContext device : instance.detachDevices()) {
                int layers = device.layers().size();
                tensors += device.closeAndCount();
                budget.release(layers);
            }
        }
        detached.remove(instanceId);
        side.instanceEnded(instanceId);
        return tensors;
    }

    /** A new registration of {@code instanceId} replaces the restored instance of that id, if there is one. */
    void replaceDetached(String instanceId) {
        if (detached.contains(instanceId)) {
            // Under the lock, and the entry leaves only after the teardown: a second rank's registration that sees
            // the entry waits here, one that no longer sees it comes after the teardown, so neither joins the old one.
            synchronized (detachLock) {
                if (detached.contains(instanceId)) {
                    end(instanceId, true);
                    LOG.info("restored instance {} replaced by a new registration", instanceId);
                }
            }
        }
    }

    /** Ends the detached instances that had no RPC for the detached idle timeout. */
    void endIdleDetached() {
        for (String id : detached.idle(detachedIdleNanos)) {
            synchronized (detachLock) {
                if (detached.isIdle(id, detachedIdleNanos)) {
                    int mappings = end(id, true);
                    LOG.info(
                            "restored instance {} ended: no Session adopted it and no RPC came for {} s; {} layer"
                                    + " mappings released",
                            id,
                            detachedIdleNanos / 1_000_000_000L,
                            Math.max(mappings, 0));
                }
            }
        }
    }

    /**
     * The operator's instance cleanup: one instance, or all when {@code instanceId} is null.
     *
     * @return null when a named instance did not exist and nothing was dropped (the endpoint answers 404)
     */
    @Nullable
    CleanupResult cleanup(@Nullable String instanceId) {
        List<String> ids = instanceId == null ? instances.ids() : List.of(instanceId);
        // ids held only beside the engine (push layers of a worker that registered nothing else) end too
        List<String> sideIds = side.ids();
        List<String> removed = new ArrayList<>();
        int tensors = 0;
        for (String id : ids) {
            int n = end(id, true); // ends the id's side registrations as well
            if (n >= 0 || sideIds.contains(id)) {
                removed.add(id);
                tensors += Math.max(n, 0);
            }
        }
        if (instanceId == null) {
            for (String id : sideIds) {
                if (!removed.contains(id)) {
                    side.instanceEnded(id);
                    removed.add(id);
                }
            }
        }
        if (instanceId != null && removed.isEmpty()) {
            return null;
        }
        return new CleanupResult(removed, tensors);
    }
}
