package io.pegaflow.core.device.select;

import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.device.cuda.CudaCopyConfig;
import io.pegaflow.core.device.host.HostDeviceBackend;
import io.pegaflow.kernel.memory.MemoryRegionInfo;
import java.lang.reflect.Method;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses the device backend ({@code pega.device.backend}): {@code auto} picks cuda when libcuda loads and a GPU is
 * present, else host; {@code cuda} fails startup without a GPU; {@code host} never touches CUDA.
 *
 * <p>The cuda backend is looked up reflectively so that this class, and a host-only deployment, never load the CUDA
 * bindings ({@link CudaCopyConfig} is plain values and loads none).
 */
public final class DeviceBackends {
    private static final Logger LOG = LoggerFactory.getLogger(DeviceBackends.class);
    private static final String CUDA_CLASS = "io.pegaflow.core.device.cuda.CudaDeviceBackend";

    private DeviceBackends() {}

    /**
     * Creates the backend for {@code mode}.
     *
     * @param mode auto, cuda or host
     * @param devices CUDA ordinals to use, empty for all
     * @param poolRegions pinned pool regions the cuda backend registers with the driver
     * @param copy the cuda backend's copy settings ({@code pega.cuda.*})
     */
    public static DeviceBackend select(
            String mode, int[] devices, List<MemoryRegionInfo> poolRegions, CudaCopyConfig copy) {
        return switch (mode) {
            case "host" -> new HostDeviceBackend();
            case "cuda" -> {
                if (!cudaAvailable()) {
                    throw new IllegalStateException(
                            "pega.device.backend: cuda (expected: a machine with libcuda and at least one GPU)");
                }
                yield createCuda(devices, poolRegions, copy);
            }
            case "auto" -> {
                if (cudaAvailable()) {
                    LOG.info("device backend: cuda (libcuda and a GPU found)");
                    yield createCuda(devices, poolRegions, copy);
                }
                LOG.info("device backend: host (no GPU found)");
                yield new HostDeviceBackend();
            }
            default ->
                throw new IllegalArgumentException("pega.device.backend: " + mode + " (expected: auto, cuda or host)");
        };
    }

    private static boolean cudaAvailable() {
        try {
            Class<?> c = Class.forName(CUDA_CLASS);
            return (Boolean) c.getMethod("isAvailable").invoke(null);
        } catch (ReflectiveOperationException | LinkageError e) {
            return false;
        }
    }

    private static DeviceBackend createCuda(int[] devices, List<MemoryRegionInfo> poolRegions, CudaCopyConfig copy) {
        try {
            Class<?> c = Class.forName(CUDA_CLASS);
            Method create = c.getMethod("create", int[].class, List.class, CudaCopyConfig.class);
            return (DeviceBackend) create.invoke(null, devices, poolRegions, copy);
        } catch (java.lang.reflect.InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException("cuda backend failed to start: " + cause, cause);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cuda backend is not available in this build: " + e, e);
        }
    }
}
