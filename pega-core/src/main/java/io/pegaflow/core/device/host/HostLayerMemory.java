package io.pegaflow.core.device.host;

import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.device.MappingCache;
import java.util.concurrent.atomic.AtomicBoolean;

/** A layer inside a shared {@link ShmMapping}; holds one reference on it until closed (once). */
final class HostLayerMemory implements LayerMemory {
    private final MappingCache.Entry<HostDeviceBackend.ShmKey, ShmMapping> mapping;
    private final long offset;
    private final long sizeBytes;
    private final AtomicBoolean closed = new AtomicBoolean();

    HostLayerMemory(MappingCache.Entry<HostDeviceBackend.ShmKey, ShmMapping> mapping, long offset, long sizeBytes) {
        this.mapping = mapping;
        this.offset = offset;
        this.sizeBytes = sizeBytes;
    }

    @Override
    public long baseAddress() {
        return mapping.mapping().address() + offset;
    }

    @Override
    public long sizeBytes() {
        return sizeBytes;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            mapping.release();
        }
    }
}
