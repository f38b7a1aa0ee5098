package io.pegaflow.core.device.host;

import io.pegaflow.sys.Posix;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One shared mapping of a {@code /dev/shm} object, shared by every layer that lives in it. Reference counted: each
 * {@link HostLayerMemory} holds one reference, and the last release unmaps exactly once and tells the backend to
 * forget the mapping.
 */
final class ShmMapping {
    private final String key;
    private final long address;
    private final long sizeBytes;
    private final AtomicInteger refs = new AtomicInteger(1);
    private final HostDeviceBackend owner;

    ShmMapping(String key, long address, long sizeBytes, HostDeviceBackend owner) {
        this.key = key;
        this.address = address;
        this.sizeBytes = sizeBytes;
        this.owner = owner;
    }

    String key() {
        return key;
    }

    long address() {
        return address;
    }

    long sizeBytes() {
        return sizeBytes;
    }

    /** Adds a reference unless the mapping is already being torn down. */
    boolean tryRetain() {
        for (; ; ) {
            int current = refs.get();
            if (current <= 0) {
                return false;
            }
            if (refs.compareAndSet(current, current + 1)) {
                return true;
            }
        }
    }

    void release() {
        int now = refs.decrementAndGet();
        if (now == 0) {
            owner.forget(this);
            // OFF-HEAP: every layer over this mapping has been closed, after its lanes drained.
            Posix.munmap(address, sizeBytes);
        } else if (now < 0) {
            throw new IllegalStateException("shm mapping released twice: " + key);
        }
    }
}
