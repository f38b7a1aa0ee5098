package io.pegaflow.testkit;

import io.pegaflow.sys.OffHeap;
import java.util.UUID;

/**
 * The prefill worker's layer-ready object for one pushed request (docs/design/pd-push.md §2): 32 bytes,
 * {@code "PFLR"} magic, version 1, the layer count, then the u64 count of ready layers at 16 and the u64 abort flag
 * at 24. The worker calls {@link #markReady(int)} after each layer's KV bytes are in its memory; the server polls.
 *
 * <p>Ownership: the creator owns it and must {@link #close()} it (unmap and unlink, once). Thread-safety: one writer.
 */
public final class LayerReadyShm implements AutoCloseable {
    public static final int SIZE_BYTES = 32;
    /** {@code "PFLR"} as a little-endian u32. */
    public static final int MAGIC = 0x524C4650;

    public static final int VERSION = 1;
    public static final int READY_OFFSET = 16;
    public static final int ABORT_OFFSET = 24;
    private static final String NAME_PREFIX = "pega_ready_";

    private final ShmMapping mapping;
    private final int layers;

    private LayerReadyShm(ShmMapping mapping, int layers) {
        this.mapping = mapping;
        this.layers = layers;
    }

    /** Creates the object for a push of {@code layers} layers, none ready. */
    public static LayerReadyShm create(int layers) {
        return createWithHeader(MAGIC, VERSION, layers);
    }

    /** With a chosen header, for tests of the server's validation. */
    public static LayerReadyShm createWithHeader(int magic, int version, int layers) {
        ShmMapping mapping =
                ShmMapping.create(NAME_PREFIX + UUID.randomUUID().toString().replace("-", ""), SIZE_BYTES);
        // OFF-HEAP: aligned fields inside a fresh 32-byte mapping; ftruncate zeroed the counters.
        long base = mapping.address();
        OffHeap.putInt(base, magic);
        OffHeap.putInt(base + 4, version);
        OffHeap.putInt(base + 8, layers);
        return new LayerReadyShm(mapping, layers);
    }

    public String name() {
        return mapping.name();
    }

    public int layers() {
        return layers;
    }

    /** Layers {@code 0 .. count-1} are ready (release store: the KV writes before it are visible first). */
    public void markReady(int count) {
        // OFF-HEAP: 8-byte aligned field inside the live mapping.
        OffHeap.putLongRelease(mapping.address() + READY_OFFSET, count);
    }

    /** Tells the server the worker gave up on the request. */
    public void abort() {
        // OFF-HEAP: 8-byte aligned field inside the live mapping.
        OffHeap.putLongRelease(mapping.address() + ABORT_OFFSET, 1);
    }

    @Override
    public void close() {
        mapping.close();
    }
}
