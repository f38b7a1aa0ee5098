package io.pegaflow.core.device.cuda;

import io.pegaflow.sys.cuda.CudaModules;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The gather/scatter copy kernel of one device: {@code copy_kernel.ptx} (built from {@code src/main/cuda} by
 * {@code scripts/build-ptx.sh}) loaded into the device's primary context with {@code cuModuleLoadData}.
 *
 * <p>Owned by the device state: created once when the device comes up, unloaded when the backend closes. The
 * function handle may be launched from any thread that has the context current.
 */
final class CopyKernel implements AutoCloseable {
    static final String RESOURCE = "copy_kernel.ptx";
    static final String ENTRY = "pega_copy_fragments";
    final long module;
    final long function;
    /** The most threads per CTA the compiled kernel allows on this device (a multiple of 32). */
    final int threadsPerCta;

    private CopyKernel(long module, long function, int threadsPerCta) {
        this.module = module;
        this.function = function;
        this.threadsPerCta = threadsPerCta;
    }

    /** Loads the kernel into the current context. */
    static CopyKernel load() {
        long module = CudaModules.moduleLoadData(ptx());
        try {
            long function = CudaModules.moduleGetFunction(module, ENTRY);
            int max = CudaModules.functionAttribute(function, CudaModules.FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
            return new CopyKernel(module, function, max / 32 * 32);
        } catch (RuntimeException e) {
            CudaModules.moduleUnload(module);
            throw e;
        }
    }

    /** The shipped PTX text. */
    static byte[] ptx() {
        try (InputStream in = CopyKernel.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("resource " + RESOURCE + " is missing from the build");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + RESOURCE, e);
        }
    }

    /** Unloads the module; the device's context must be current. */
    @Override
    public void close() {
        CudaModules.moduleUnload(module);
    }
}
