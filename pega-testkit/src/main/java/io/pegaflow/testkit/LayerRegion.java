package io.pegaflow.testkit;

import java.util.Objects;

/**
 * One layer a {@link MockVllmWorker} registers: its name, its layout, and where its tensor lies, {@code [offsetBytes,
 * offsetBytes + layout.tensorBytes())} of {@code memory}. Several regions may share one {@link ShmDeviceMemory} at
 * different offsets, as several vLLM layers share one CUDA allocation.
 *
 * <p>Immutable value; does not own {@code memory} (the worker or the test that created it closes it).
 */
public record LayerRegion(String name, KvLayout layout, ShmDeviceMemory memory, long offsetBytes) {
    public LayerRegion {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(layout, "layout");
        Objects.requireNonNull(memory, "memory");
        if (offsetBytes < 0 || offsetBytes > memory.sizeBytes() - layout.tensorBytes()) {
            throw new IllegalArgumentException("layer " + name + ": tensor [" + offsetBytes + ", +"
                    + layout.tensorBytes() + ") outside " + memory);
        }
    }

    /** The host backend descriptor of this region: the layer's {@code wrapper_bytes}. */
    public byte[] descriptor() {
        return memory.descriptor(offsetBytes, layout.tensorBytes());
    }

    /** Offset within {@link #memory()} of owned range {@code range} of block {@code block}. */
    public long rangeOffset(int block, int range) {
        return offsetBytes + layout.rangeOffset(block, range);
    }
}
