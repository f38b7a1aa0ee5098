package io.pegaflow.sys.cuda;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * Direct-mapped CUDA driver API ({@code libcuda.so.1}). Raw: every function returns a {@code CUresult}; use
 * {@link Cuda}, which checks each code and throws a {@link CudaException} that names the call.
 *
 * <p><b>Lazy:</b> the library is bound when this class initialises, and only {@link Cuda} touches it, after it has
 * checked that the library loads. A machine without a driver never initialises this class.
 *
 * <p>Types: {@code CUdevice} is an {@code int}; {@code CUdeviceptr}, {@code CUcontext}, {@code CUstream},
 * {@code CUevent} and host pointers are 64-bit values passed as {@code long} (x86-64 and aarch64 Linux); out
 * parameters are one-element primitive arrays. The versioned entry points ({@code _v2}) are the ones the CUDA headers
 * map the plain names to since CUDA 4.0/11.0; binding the plain name would reach the legacy 32-bit ABI.
 */
final class CudaDriver {
    static {
        Native.register(CudaDriver.class, NativeLibrary.getInstance(Cuda.libraryName()));
    }

    private CudaDriver() {}

    static native int cuInit(int flags);

    static native int cuDriverGetVersion(int[] version);

    static native int cuGetErrorName(int error, long[] name);

    static native int cuDeviceGetCount(int[] count);

    static native int cuDeviceGet(int[] device, int ordinal);

    static native int cuDeviceGetName(byte[] name, int len, int device);

    static native int cuDeviceGetUuid_v2(byte[] uuid, int device);

    static native int cuDeviceGetPCIBusId(byte[] pciBusId, int len, int device);

    static native int cuDeviceGetAttribute(int[] value, int attribute, int device);

    static native int cuDeviceTotalMem_v2(long[] bytes, int device);

    static native int cuDevicePrimaryCtxRetain(long[] ctx, int device);

    static native int cuDevicePrimaryCtxRelease_v2(int device);

    static native int cuCtxSetCurrent(long ctx);

    static native int cuCtxGetCurrent(long[] ctx);

    static native int cuCtxSynchronize();

    static native int cuIpcOpenMemHandle_v2(long[] devicePtr, CuIpcMemHandle.ByValue handle, int flags);

    static native int cuIpcCloseMemHandle(long devicePtr);

    static native int cuIpcGetMemHandle(CuIpcMemHandle handle, long devicePtr);

    static native int cuMemGetAddressRange_v2(long[] base, long[] size, long devicePtr);

    static native int cuStreamCreate(long[] stream, int flags);

    static native int cuStreamSynchronize(long stream);

    static native int cuStreamDestroy_v2(long stream);

    static native int cuEventCreate(long[] event, int flags);

    static native int cuEventRecord(long event, long stream);

    static native int cuEventSynchronize(long event);

    static native int cuEventQuery(long event);

    static native int cuEventElapsedTime(float[] millis, long start, long end);

    static native int cuEventDestroy_v2(long event);

    static native int cuMemcpyDtoHAsync_v2(long dstHost, long srcDevice, long bytes, long stream);

    static native int cuMemcpyHtoDAsync_v2(long dstDevice, long srcHost, long bytes, long stream);

    static native int cuMemcpyDtoH_v2(long dstHost, long srcDevice, long bytes);

    static native int cuMemcpyHtoD_v2(long dstDevice, long srcHost, long bytes);

    static native int cuMemHostRegister_v2(long hostPtr, long bytes, int flags);

    static native int cuMemHostUnregister(long hostPtr);

    static native int cuMemHostAlloc(long[] hostPtr, long bytes, int flags);

    static native int cuMemFreeHost(long hostPtr);

    static native int cuMemGetInfo_v2(long[] free, long[] total);

    static native int cuMemAlloc_v2(long[] devicePtr, long bytes);

    static native int cuMemFree_v2(long devicePtr);

    static native int cuMemsetD8_v2(long devicePtr, byte value, long count);

    static native int cuMemHostGetDevicePointer_v2(long[] devicePtr, long hostPtr, int flags);

    static native int cuModuleLoadData(long[] module, byte[] image);

    static native int cuModuleUnload(long module);

    static native int cuModuleGetFunction(long[] function, long module, String name);

    static native int cuFuncGetAttribute(int[] value, int attribute, long function);

    /** {@code kernelParams} and {@code extra} are native addresses ({@code void**}), 0 for none. */
    static native int cuLaunchKernel(
            long function,
            int gridX,
            int gridY,
            int gridZ,
            int blockX,
            int blockY,
            int blockZ,
            int sharedMemBytes,
            long stream,
            long kernelParams,
            long extra);
}
