package io.pegaflow.core.device.host;

/**
 * One shared mapping of a {@code /dev/shm} object, shared by every layer that lives in it through the backend's
 * {@link io.pegaflow.core.device.MappingCache}, which counts the layers and unmaps on the last close.
 *
 * @param address first byte of the mapping in this process
 * @param sizeBytes the object's size when it was mapped
 */
record ShmMapping(long address, long sizeBytes) {}
