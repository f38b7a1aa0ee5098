package io.pegaflow.core.device.cuda;

import io.pegaflow.sys.cuda.Cuda;
import io.pegaflow.sys.cuda.CudaException;

/**
 * One lane's scratch memory for copy descriptors: a pinned host buffer (batch arrays, kernel descriptors before their
 * upload, kernel arguments) and a device buffer (kernel descriptors), each grown to a power of two when a plan needs
 * more and kept for the next plan.
 *
 * <p>Confined to its lane's thread. Growing frees the old buffer, which is safe because a lane returns only after its
 * plan's stream has completed. Owns both buffers; {@link #close()} frees them (context current).
 */
final class LaneBuffers implements AutoCloseable {
    private static final long MIN_BYTES = 64L << 10;

    private long host;
    private long hostBytes;
    private long device;
    private long deviceBytes;

    /** A pinned host buffer of at least {@code bytes}; its contents are not kept across growth. */
    long host(long bytes) {
        if (bytes > hostBytes) {
            long size = grown(bytes);
            long fresh = Cuda.memHostAlloc(size, Cuda.CU_MEMHOSTALLOC_PORTABLE);
            if (host != 0) {
                Cuda.memFreeHost(host);
            }
            host = fresh;
            hostBytes = size;
        }
        return host;
    }

    /** A device buffer of at least {@code bytes}; its contents are not kept across growth. */
    long device(long bytes) {
        if (bytes > deviceBytes) {
            long size = grown(bytes);
            long fresh = Cuda.memAlloc(size);
            if (device != 0) {
                Cuda.memFree(device);
            }
            device = fresh;
            deviceBytes = size;
        }
        return device;
    }

    private static long grown(long bytes) {
        return Math.max(MIN_BYTES, Long.highestOneBit(bytes - 1) << 1);
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        try {
            if (host != 0) {
                Cuda.memFreeHost(host);
            }
        } catch (CudaException e) {
            failure = e;
        }
        try {
            if (device != 0) {
                Cuda.memFree(device);
            }
        } catch (CudaException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        host = 0;
        hostBytes = 0;
        device = 0;
        deviceBytes = 0;
        if (failure != null) {
            throw failure;
        }
    }
}
