package io.pegaflow.core.engine;

import io.pegaflow.core.error.EngineException;

/**
 * What one client may take from the engine (decision 0011, defects 4 and 5). Each bound refuses with RESOURCE_EXHAUSTED
 * naming its {@code pega.limits.*} key, before anything is mapped, started, evicted or allocated, so a refused request
 * leaves nothing behind.
 *
 * @param requestPoolShare the largest fraction of the pinned pool one Save may need, in (0, 1]: a larger Save fails
 *     before it evicts anything (defect 5: one Save larger than the pool used to evict every tenant's unleased blocks,
 *     then fail)
 * @param instances live instances
 * @param mappedObjects layer mappings over all instances (each is one mapping of a worker's object; the kernel's
 *     {@code vm.max_map_count}, 65530 by default, aborts the JVM when exhausted)
 * @param devices device contexts over all instances
 * @param laneThreads copy-lane threads over all devices (two per device: save and load)
 * @param leasesPerInstance live query leases of one instance
 * @param prefetchesPerInstance backing-tier prefetch tasks of one instance
 */
public record EngineLimits(
        double requestPoolShare,
        int instances,
        int mappedObjects,
        int devices,
        int laneThreads,
        int leasesPerInstance,
        int prefetchesPerInstance) {

    /** Lane threads each device context starts. */
    public static final int LANES_PER_DEVICE = 2;

    /** Bounds far above what a node serves (a few vLLM replicas of up to a few hundred layers per GPU). */
    public static final EngineLimits DEFAULTS = new EngineLimits(0.5, 256, 16384, 512, 1024, 16384, 1024);

    public EngineLimits {
        if (!(requestPoolShare > 0 && requestPoolShare <= 1)) {
            throw new IllegalArgumentException(
                    "pega.limits.request-pool-share: " + requestPoolShare + " (expected: > 0 and <= 1)");
        }
        requireAtLeastOne("pega.limits.instances", instances);
        requireAtLeastOne("pega.limits.mapped-objects", mappedObjects);
        requireAtLeastOne("pega.limits.devices", devices);
        requireAtLeastOne("pega.limits.leases-per-instance", leasesPerInstance);
        requireAtLeastOne("pega.limits.prefetches-per-instance", prefetchesPerInstance);
        if (laneThreads < LANES_PER_DEVICE) {
            throw new IllegalArgumentException("pega.limits.lane-threads: " + laneThreads + " (expected: >= "
                    + LANES_PER_DEVICE + ", each device starts " + LANES_PER_DEVICE + ")");
        }
    }

    private static void requireAtLeastOne(String key, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(key + ": " + value + " (expected: >= 1)");
        }
    }

    /** The one refusal text: what was asked, the key, its value. */
    static EngineException exhausted(String what, String key, Object limit) {
        return EngineException.resourceExhausted(what + ": " + key + " is " + limit);
    }
}
