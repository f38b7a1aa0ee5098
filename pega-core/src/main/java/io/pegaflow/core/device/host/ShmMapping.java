package io.pegaflow.core.device.host;

import java.util.concurrent.atomic.AtomicReference;

/**
 * One shared mapping of a {@code /dev/shm} object, shared by every layer that lives in it through the backend's
 * {@link io.pegaflow.core.device.MappingCache}, which counts the layers and unmaps on the last close. The first
 * instance that registers the object owns it for as long as it stays mapped: no other instance may register it.
 *
 * @param address first byte of the mapping in this process
 * @param sizeBytes the object's size when it was mapped
 * @param instance the instance the object is registered for (set by the first registration)
 */
record ShmMapping(long address, long sizeBytes, AtomicReference<String> instance) {

    ShmMapping(long address, long sizeBytes) {
        this(address, sizeBytes, new AtomicReference<>());
    }

    /** Whether {@code instanceId} may use the object: it is the first to ask, or the one that asked first. */
    boolean bindTo(String instanceId) {
        return instance.compareAndSet(null, instanceId) || instanceId.equals(instance.get());
    }
}
