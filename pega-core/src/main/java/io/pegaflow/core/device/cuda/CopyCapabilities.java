package io.pegaflow.core.device.cuda;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.pegaflow.sys.cuda.Cuda;
import io.pegaflow.sys.cuda.CudaBatchCopy;
import io.pegaflow.sys.cuda.CudaException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one device's copiers can use, found once when the device comes up (its primary context current): the batched
 * copy (the driver exports it and a one-copy probe batch succeeds) and the copy kernel (its PTX loads and the device
 * reaches registered host memory at the host's addresses). One log line per device says what was found and, for a
 * method the configured mode needs but the device lacks, why and what it falls back to.
 *
 * <p>Owns the loaded kernel module; {@link #close()} unloads it (context current).
 */
final class CopyCapabilities implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CopyCapabilities.class);

    final CudaCopyConfig config;
    final boolean batch;
    final String batchUnavailable;
    /** Null when the device cannot run it ({@link #kernelUnavailable} says why). */
    final @Nullable CopyKernel kernel;

    final String kernelUnavailable;

    private CopyCapabilities(
            CudaCopyConfig config, String batchUnavailable, @Nullable CopyKernel kernel, String kernelUnavailable) {
        this.config = config;
        this.batch = batchUnavailable.isEmpty();
        this.batchUnavailable = batchUnavailable;
        this.kernel = kernel;
        this.kernelUnavailable = kernelUnavailable;
    }

    static CopyCapabilities discover(int ordinal, int device, CudaCopyConfig config) {
        String batchReason = config.mode() == CopyMode.PER_RANGE ? "per-range mode" : probeBatch();
        // Loaded whatever the mode (a few kB of PTX, compiled once): a copier may be opened with other settings.
        @Nullable CopyKernel kernel = null;
        String kernelReason;
        try {
            if (Cuda.deviceAttribute(device, Cuda.CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM) != 1) {
                kernelReason = "the device does not reach registered host memory at the host's addresses";
            } else {
                kernel = CopyKernel.load();
                kernelReason = "";
            }
        } catch (RuntimeException e) {
            kernelReason = String.valueOf(e.getMessage());
        }
        CopyCapabilities c = new CopyCapabilities(config, batchReason, kernel, kernelReason);
        c.log(ordinal);
        return c;
    }

    private void log(int ordinal) {
        boolean wantsBatch = config.mode() != CopyMode.PER_RANGE;
        String kernelText = kernel != null
                ? "kernel <= " + config.kernelMaxCtas() + " CTAs, <= " + (config.kernelMaxLaunchBytes() >> 20)
                        + " MiB per launch"
                : "no kernel (" + kernelUnavailable + ")";
        if (wantsBatch && !batch) {
            LOG.warn(
                    "cuda device {}: batched copies unavailable ({}); copy mode {} falls back to one cuMemcpyAsync per"
                            + " range, {}",
                    ordinal,
                    batchUnavailable,
                    config.mode().key(),
                    kernelText);
        } else {
            LOG.info(
                    "cuda device {}: copy mode {}: {}, {}",
                    ordinal,
                    config.mode().key(),
                    batch
                            ? "cuMemcpyBatchAsync up to " + config.batchMaxRanges() + " ranges per call, "
                                    + config.batchSubmitters() + " submitting threads for plans of >= "
                                    + config.splitMinRanges() + " ranges below " + (config.splitBelowBytes() >> 10)
                                    + " KiB"
                            : "per range",
                    kernelText);
        }
    }

    /** Empty when a one-copy batch (device to device, 16 bytes) runs on this device; else why not. */
    private static String probeBatch() {
        String reason = CudaBatchCopy.unavailableReason();
        if (!reason.isEmpty()) {
            return reason;
        }
        long stream = 0;
        long buffer = 0;
        try (Memory arrays = new Memory(BatchDescriptors.bytesFor(1))) {
            long base = Pointer.nativeValue(arrays);
            stream = Cuda.streamCreate(Cuda.CU_STREAM_NON_BLOCKING);
            buffer = Cuda.memAlloc(64);
            Cuda.memsetD8(buffer, 0x5a, 64);
            CudaBatchCopy.writeAttributes(BatchDescriptors.attributes(base), CudaBatchCopy.SRC_ACCESS_ORDER_STREAM, 0);
            long idx = BatchDescriptors.attributeIndices(base);
            long dst = BatchDescriptors.dsts(base);
            long src = BatchDescriptors.srcs(base, 1);
            long size = BatchDescriptors.sizes(base, 1);
            arrays.setLong(idx - base, 0);
            arrays.setLong(dst - base, buffer + 32);
            arrays.setLong(src - base, buffer);
            arrays.setLong(size - base, 16);
            CudaBatchCopy.memcpyBatchAsync(dst, src, size, 1, BatchDescriptors.attributes(base), idx, 1, stream);
            Cuda.streamSynchronize(stream);
            return "";
        } catch (CudaException e) {
            return "probe batch failed: " + e.getMessage();
        } finally {
            freeQuietly(stream, buffer);
        }
    }

    private static void freeQuietly(long stream, long buffer) {
        try {
            if (buffer != 0) {
                Cuda.memFree(buffer);
            }
            if (stream != 0) {
                Cuda.streamDestroy(stream);
            }
        } catch (CudaException e) {
            LOG.warn("freeing the batch probe's stream or buffer failed: {}", e.getMessage());
        }
    }

    @Override
    public void close() {
        if (kernel != null) {
            kernel.close();
        }
    }
}
