package io.pegaflow.core.engine;

/**
 * The registration caps of {@link EngineLimits} that span instances: device contexts, their lane threads and the layer
 * mappings they hold (decision 0011, defect 4: ~65k tiny registrations exhausted the kernel's mapping limit and aborted
 * the JVM; every device kept its lane threads). A registration reserves its device and layers before it maps anything
 * and gives them back when it fails or when its device context is torn down. Thread-safe.
 */
final class RegistrationBudget {
    private final EngineLimits limits;
    private int devices;
    private long mappedObjects;

    RegistrationBudget(EngineLimits limits) {
        this.limits = limits;
    }

    /**
     * Reserves one device context with {@code layers} mappings.
     *
     * @throws io.pegaflow.core.error.EngineException RESOURCE_EXHAUSTED naming the cap that would be passed
     */
    synchronized void reserve(int layers) {
        if (devices + 1 > limits.devices()) {
            throw EngineLimits.exhausted(
                    "no more devices can be registered (" + devices + " held)",
                    "pega.limits.devices",
                    limits.devices());
        }
        long threads = (long) (devices + 1) * EngineLimits.LANES_PER_DEVICE;
        if (threads > limits.laneThreads()) {
            throw EngineLimits.exhausted(
                    "a new device would start lane threads " + (threads - 1) + " and " + threads,
                    "pega.limits.lane-threads",
                    limits.laneThreads());
        }
        reserveMappings(layers);
        devices++;
    }

    /**
     * Reserves {@code layers} mappings of a registration beside the engine's device contexts (push layers): they map
     * objects, but start no lanes of their own.
     *
     * @throws io.pegaflow.core.error.EngineException RESOURCE_EXHAUSTED naming {@code pega.limits.mapped-objects}
     */
    synchronized void reserveMappings(int layers) {
        if (mappedObjects + layers > limits.mappedObjects()) {
            throw EngineLimits.exhausted(
                    "registering " + layers + " more layers would map more than allowed (" + mappedObjects + " held)",
                    "pega.limits.mapped-objects",
                    limits.mappedObjects());
        }
        mappedObjects += layers;
    }

    /** Gives back mappings reserved with {@link #reserveMappings}. */
    synchronized void releaseMappings(int layers) {
        mappedObjects -= layers;
    }

    /** Gives back one device context and its {@code layers} mappings. */
    synchronized void release(int layers) {
        devices--;
        mappedObjects -= layers;
    }

    synchronized int devices() {
        return devices;
    }

    synchronized long mappedObjects() {
        return mappedObjects;
    }
}
