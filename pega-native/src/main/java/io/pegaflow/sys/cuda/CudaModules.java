package io.pegaflow.sys.cuda;

import java.util.Arrays;

/**
 * Modules and kernel launches: load PTX or a cubin into the current context, look up a kernel, launch it on a stream.
 * Checked like {@link Cuda}: every failure is a {@link CudaException} that names the call.
 */
public final class CudaModules {
    /** {@code CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK}. */
    public static final int FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
    /** {@code CU_FUNC_ATTRIBUTE_NUM_REGS}. */
    public static final int FUNC_ATTRIBUTE_NUM_REGS = 4;

    private CudaModules() {}

    /** Loads a module image (PTX text is compiled by the driver) into the current context. */
    public static long moduleLoadData(byte[] image) {
        Cuda.requireLoaded();
        byte[] terminated = image.length > 0 && image[image.length - 1] == 0
                ? image
                : Arrays.copyOf(image, image.length + 1); // PTX is read as a C string
        long[] module = new long[1];
        Cuda.check(CudaDriver.cuModuleLoadData(module, terminated), "cuModuleLoadData", image.length + " bytes");
        return module[0];
    }

    public static void moduleUnload(long module) {
        Cuda.requireLoaded();
        Cuda.check(CudaDriver.cuModuleUnload(module), "cuModuleUnload", "");
    }

    public static long moduleGetFunction(long module, String name) {
        Cuda.requireLoaded();
        long[] f = new long[1];
        Cuda.check(CudaDriver.cuModuleGetFunction(f, module, name), "cuModuleGetFunction", name);
        return f[0];
    }

    public static int functionAttribute(long function, int attribute) {
        Cuda.requireLoaded();
        int[] v = new int[1];
        Cuda.check(
                CudaDriver.cuFuncGetAttribute(v, attribute, function), "cuFuncGetAttribute", "attribute " + attribute);
        return v[0];
    }

    /**
     * Launches a one-dimensional grid on {@code stream}.
     *
     * @param kernelParams native address of the {@code void*[]} of argument addresses (read during the call)
     */
    public static void launchKernel(long function, int ctas, int threadsPerCta, long stream, long kernelParams) {
        int rc = CudaDriver.cuLaunchKernel(function, ctas, 1, 1, threadsPerCta, 1, 1, 0, stream, kernelParams, 0L);
        if (rc != Cuda.CUDA_SUCCESS) {
            throw new CudaException(
                    "cuLaunchKernel", rc, Cuda.errorName(rc), "grid " + ctas + " x block " + threadsPerCta);
        }
    }
}
