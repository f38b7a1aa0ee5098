package io.pegaflow.sys.cuda;

import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Checked access to the CUDA driver API. Every method calls one driver function, checks its {@code CUresult} and
 * throws a {@link CudaException} naming the call; nothing here holds state besides the one-time probe.
 *
 * <p><b>Loading is lazy and never throws from {@link #probe()}:</b> the first call tries to load
 * {@code libcuda.so.1} (system property {@code pega.cuda.library} overrides the name), run {@code cuInit(0)} and
 * count devices. Any other method called while the driver is unavailable throws {@link CudaException} with call
 * {@code libcuda}. The host backend never calls into this class beyond {@link #probe()}.
 *
 * <p>Contexts: the driver binds a context to the calling thread. Methods that need one (streams, copies, IPC,
 * registration) use whatever {@link #ctxSetCurrent} made current on this thread.
 *
 * <p>Thread-safe: the driver API is thread-safe; the probe is computed once under the class lock.
 */
public final class Cuda {
    /** Property naming the driver library; tests point it at a missing name to simulate a machine without CUDA. */
    public static final String LIBRARY_PROPERTY = "pega.cuda.library";

    public static final String DEFAULT_LIBRARY = "libcuda.so.1";

    public static final int CUDA_SUCCESS = 0;
    public static final int CUDA_ERROR_INVALID_VALUE = 1;
    public static final int CUDA_ERROR_NOT_INITIALIZED = 3;
    public static final int CUDA_ERROR_NO_DEVICE = 100;
    public static final int CUDA_ERROR_INVALID_DEVICE = 101;
    public static final int CUDA_ERROR_NOT_READY = 600;
    public static final int CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712;
    public static final int CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713;
    public static final int CUDA_ERROR_NOT_SUPPORTED = 801;

    /** {@code cuIpcOpenMemHandle} flag: enable peer access lazily (the only defined flag). */
    public static final int CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1;
    /** {@code cuStreamCreate} flag: no implicit synchronisation with the legacy default stream. */
    public static final int CU_STREAM_NON_BLOCKING = 0x1;
    /** {@code cuEventCreate} flag: the waiting thread sleeps instead of spinning. */
    public static final int CU_EVENT_BLOCKING_SYNC = 0x1;
    /** {@code cuEventCreate} flag: no timestamps (cheaper record and sync). */
    public static final int CU_EVENT_DISABLE_TIMING = 0x2;
    /** {@code cuMemHostRegister} flag: pinned for every context, not only the current one. */
    public static final int CU_MEMHOSTREGISTER_PORTABLE = 0x1;
    /** {@code cuMemHostRegister} flag: mapped into the device's address space, so kernels can reach it. */
    public static final int CU_MEMHOSTREGISTER_DEVICEMAP = 0x2;
    /** {@code cuMemHostAlloc} flag: portable. */
    public static final int CU_MEMHOSTALLOC_PORTABLE = 0x1;
    /** {@code cuMemHostAlloc} flag: write-combined. */
    public static final int CU_MEMHOSTALLOC_WRITECOMBINED = 0x4;

    public static final int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
    public static final int CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19;
    public static final int CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33;
    public static final int CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34;
    public static final int CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50;
    /** A registered host range has the same address on the device as on the host (UVA without translation). */
    public static final int CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91;

    /** What {@link #probe()} found. */
    public record Availability(boolean loaded, int deviceCount, int driverVersion, String reason) {
        /** The driver loaded, initialised and sees at least one device. */
        public boolean usable() {
            return loaded && deviceCount > 0;
        }
    }

    /** Null until the first probe (double-checked: the probe loads a library once per process). */
    private static volatile @Nullable Availability availability;

    private Cuda() {}

    static String libraryName() {
        return System.getProperty(LIBRARY_PROPERTY, DEFAULT_LIBRARY);
    }

    /**
     * Loads the driver, initialises it and counts devices, once. Never throws: a missing library, a failed
     * {@code cuInit} or zero devices come back as {@link Availability} with a reason.
     */
    public static Availability probe() {
        Availability a = availability;
        if (a != null) {
            return a;
        }
        synchronized (Cuda.class) {
            Availability found = availability;
            if (found == null) {
                found = probeLibrary(libraryName());
                availability = found;
            }
            return found;
        }
    }

    /** True when {@code libcuda} loads, initialises and has at least one device. Never throws. */
    public static boolean isAvailable() {
        return probe().usable();
    }

    /** Probes a named library without caching the answer (tests use a missing name). */
    static Availability probeLibrary(String name) {
        try {
            NativeLibrary.getInstance(name);
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            return new Availability(false, 0, 0, "cannot load " + name + ": " + e.getMessage());
        }
        try {
            int rc = CudaDriver.cuInit(0);
            if (rc == CUDA_ERROR_NO_DEVICE) {
                return new Availability(true, 0, driverVersionOrZero(), "cuInit: no CUDA device (100)");
            }
            if (rc != CUDA_SUCCESS) {
                return new Availability(false, 0, 0, "cuInit failed: " + errorName(rc) + " (" + rc + ")");
            }
            int[] count = new int[1];
            rc = CudaDriver.cuDeviceGetCount(count);
            if (rc != CUDA_SUCCESS) {
                return new Availability(false, 0, 0, "cuDeviceGetCount failed: " + errorName(rc) + " (" + rc + ")");
            }
            return new Availability(
                    true, count[0], driverVersionOrZero(), count[0] > 0 ? "" : "no CUDA device visible");
        } catch (LinkageError | RuntimeException e) {
            return new Availability(false, 0, 0, "cannot bind " + name + ": " + e);
        }
    }

    private static int driverVersionOrZero() {
        int[] v = new int[1];
        return CudaDriver.cuDriverGetVersion(v) == CUDA_SUCCESS ? v[0] : 0;
    }

    static void requireLoaded() {
        Availability a = probe();
        if (!a.loaded()) {
            throw new CudaException("libcuda", CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", a.reason());
        }
    }

    /** Symbolic name of a {@code CUresult}, from the driver when it knows it. */
    public static String errorName(int result) {
        try {
            long[] p = new long[1];
            if (CudaDriver.cuGetErrorName(result, p) == CUDA_SUCCESS && p[0] != 0) {
                return new Pointer(p[0]).getString(0, StandardCharsets.US_ASCII.name());
            }
        } catch (LinkageError | RuntimeException ignored) {
            // Fall through to the numeric form.
        }
        return "CUresult(" + result + ")";
    }

    /** Throws a {@link CudaException} naming {@code call} unless {@code result} is {@code CUDA_SUCCESS}. */
    public static void check(int result, String call, String detail) {
        if (result != CUDA_SUCCESS) {
            throw new CudaException(call, result, errorName(result), detail);
        }
    }

    // ---------------------------------------------------------------- devices

    /** Driver version as {@code 1000*major + 10*minor}, e.g. 13000. */
    public static int driverVersion() {
        requireLoaded();
        int[] v = new int[1];
        check(CudaDriver.cuDriverGetVersion(v), "cuDriverGetVersion", "");
        return v[0];
    }

    public static int deviceCount() {
        requireLoaded();
        int[] count = new int[1];
        check(CudaDriver.cuDeviceGetCount(count), "cuDeviceGetCount", "");
        return count[0];
    }

    /** The {@code CUdevice} handle of an ordinal (in practice the ordinal itself). */
    public static int device(int ordinal) {
        requireLoaded();
        int[] dev = new int[1];
        check(CudaDriver.cuDeviceGet(dev, ordinal), "cuDeviceGet", "ordinal " + ordinal);
        return dev[0];
    }

    public static String deviceName(int device) {
        requireLoaded();
        byte[] buf = new byte[256];
        check(CudaDriver.cuDeviceGetName(buf, buf.length, device), "cuDeviceGetName", "device " + device);
        return cString(buf);
    }

    /** The 16 raw bytes of the device's {@code CUuuid}. */
    public static byte[] deviceUuidBytes(int device) {
        requireLoaded();
        byte[] uuid = new byte[16];
        check(CudaDriver.cuDeviceGetUuid_v2(uuid, device), "cuDeviceGetUuid_v2", "device " + device);
        return uuid;
    }

    /**
     * The device UUID as torch prints it ({@code str(get_device_properties(i).uuid)}): lowercase 8-4-4-4-12 hex,
     * without nvidia-smi's {@code GPU-} prefix.
     */
    public static String deviceUuid(int device) {
        return formatUuid(deviceUuidBytes(device));
    }

    /** Formats 16 bytes as lowercase 8-4-4-4-12 hex. */
    public static String formatUuid(byte[] uuid) {
        if (uuid.length != 16) {
            throw new IllegalArgumentException("a CUuuid has 16 bytes, got " + uuid.length);
        }
        StringBuilder sb = new StringBuilder(36);
        for (int i = 0; i < 16; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10) {
                sb.append('-');
            }
            sb.append(Character.forDigit((uuid[i] >> 4) & 0xF, 16)).append(Character.forDigit(uuid[i] & 0xF, 16));
        }
        return sb.toString();
    }

    /** PCI bus id in sysfs spelling, lowercase: {@code 0000:1b:00.0}. */
    public static String pciBusId(int device) {
        requireLoaded();
        byte[] buf = new byte[64];
        check(CudaDriver.cuDeviceGetPCIBusId(buf, buf.length, device), "cuDeviceGetPCIBusId", "device " + device);
        return cString(buf).toLowerCase(Locale.ROOT);
    }

    public static int deviceAttribute(int device, int attribute) {
        requireLoaded();
        int[] v = new int[1];
        check(
                CudaDriver.cuDeviceGetAttribute(v, attribute, device),
                "cuDeviceGetAttribute",
                "attribute " + attribute + " device " + device);
        return v[0];
    }

    public static long deviceTotalMem(int device) {
        requireLoaded();
        long[] v = new long[1];
        check(CudaDriver.cuDeviceTotalMem_v2(v, device), "cuDeviceTotalMem_v2", "device " + device);
        return v[0];
    }

    // ---------------------------------------------------------------- contexts

    /** Retains the device's primary context (the one torch and the reference use) and returns it. */
    public static long primaryCtxRetain(int device) {
        requireLoaded();
        long[] ctx = new long[1];
        check(CudaDriver.cuDevicePrimaryCtxRetain(ctx, device), "cuDevicePrimaryCtxRetain", "device " + device);
        return ctx[0];
    }

    public static void primaryCtxRelease(int device) {
        requireLoaded();
        check(CudaDriver.cuDevicePrimaryCtxRelease_v2(device), "cuDevicePrimaryCtxRelease_v2", "device " + device);
    }

    /** Binds {@code ctx} to the calling thread. */
    public static void ctxSetCurrent(long ctx) {
        requireLoaded();
        check(CudaDriver.cuCtxSetCurrent(ctx), "cuCtxSetCurrent", "");
    }

    public static long ctxGetCurrent() {
        requireLoaded();
        long[] ctx = new long[1];
        check(CudaDriver.cuCtxGetCurrent(ctx), "cuCtxGetCurrent", "");
        return ctx[0];
    }

    /** Waits for all work of the current context. */
    public static void ctxSynchronize() {
        requireLoaded();
        check(CudaDriver.cuCtxSynchronize(), "cuCtxSynchronize", "");
    }

    // ---------------------------------------------------------------- IPC

    /**
     * Opens another process's allocation in the current context and returns its base device address.
     *
     * @param handle the 64 raw bytes of a {@code cudaIpcMemHandle_t}
     */
    public static long ipcOpenMemHandle(byte[] handle) {
        requireLoaded();
        long[] ptr = new long[1];
        CuIpcMemHandle.ByValue h = new CuIpcMemHandle.ByValue(handle);
        check(
                CudaDriver.cuIpcOpenMemHandle_v2(ptr, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                "cuIpcOpenMemHandle_v2",
                "");
        return ptr[0];
    }

    public static void ipcCloseMemHandle(long devicePtr) {
        requireLoaded();
        check(CudaDriver.cuIpcCloseMemHandle(devicePtr), "cuIpcCloseMemHandle", "");
    }

    /** Exports an allocation of the current context (tests use it to open their own memory from another process). */
    public static byte[] ipcGetMemHandle(long devicePtr) {
        requireLoaded();
        CuIpcMemHandle h = new CuIpcMemHandle();
        check(CudaDriver.cuIpcGetMemHandle(h, devicePtr), "cuIpcGetMemHandle", "");
        h.read();
        return h.reserved.clone();
    }

    /** Base address and size of the allocation that contains {@code devicePtr}: {@code {base, size}}. */
    public static long[] memGetAddressRange(long devicePtr) {
        requireLoaded();
        long[] base = new long[1];
        long[] size = new long[1];
        check(CudaDriver.cuMemGetAddressRange_v2(base, size, devicePtr), "cuMemGetAddressRange_v2", "");
        return new long[] {base[0], size[0]};
    }

    // ---------------------------------------------------------------- streams and events

    public static long streamCreate(int flags) {
        requireLoaded();
        long[] s = new long[1];
        check(CudaDriver.cuStreamCreate(s, flags), "cuStreamCreate", "");
        return s[0];
    }

    public static void streamSynchronize(long stream) {
        requireLoaded();
        check(CudaDriver.cuStreamSynchronize(stream), "cuStreamSynchronize", "");
    }

    public static void streamDestroy(long stream) {
        requireLoaded();
        check(CudaDriver.cuStreamDestroy_v2(stream), "cuStreamDestroy_v2", "");
    }

    public static long eventCreate(int flags) {
        requireLoaded();
        long[] e = new long[1];
        check(CudaDriver.cuEventCreate(e, flags), "cuEventCreate", "");
        return e[0];
    }

    public static void eventRecord(long event, long stream) {
        requireLoaded();
        check(CudaDriver.cuEventRecord(event, stream), "cuEventRecord", "");
    }

    public static void eventSynchronize(long event) {
        requireLoaded();
        check(CudaDriver.cuEventSynchronize(event), "cuEventSynchronize", "");
    }

    /** True when the event has completed, false while work before it is still pending. */
    public static boolean eventQuery(long event) {
        requireLoaded();
        int rc = CudaDriver.cuEventQuery(event);
        if (rc == CUDA_ERROR_NOT_READY) {
            return false;
        }
        check(rc, "cuEventQuery", "");
        return true;
    }

    /** Milliseconds between two timing events. */
    public static float eventElapsedTime(long start, long end) {
        requireLoaded();
        float[] ms = new float[1];
        check(CudaDriver.cuEventElapsedTime(ms, start, end), "cuEventElapsedTime", "");
        return ms[0];
    }

    public static void eventDestroy(long event) {
        requireLoaded();
        check(CudaDriver.cuEventDestroy_v2(event), "cuEventDestroy_v2", "");
    }

    // ---------------------------------------------------------------- copies

    /** Enqueues a device-to-host copy; the host range should be pinned for it to be asynchronous. */
    public static void memcpyDtoHAsync(long dstHost, long srcDevice, long bytes, long stream) {
        int rc = CudaDriver.cuMemcpyDtoHAsync_v2(dstHost, srcDevice, bytes, stream);
        if (rc != CUDA_SUCCESS) {
            throw new CudaException(
                    "cuMemcpyDtoHAsync_v2",
                    rc,
                    errorName(rc),
                    "dst 0x" + Long.toHexString(dstHost) + " src 0x" + Long.toHexString(srcDevice) + " bytes " + bytes);
        }
    }

    /** Enqueues a host-to-device copy. */
    public static void memcpyHtoDAsync(long dstDevice, long srcHost, long bytes, long stream) {
        int rc = CudaDriver.cuMemcpyHtoDAsync_v2(dstDevice, srcHost, bytes, stream);
        if (rc != CUDA_SUCCESS) {
            throw new CudaException(
                    "cuMemcpyHtoDAsync_v2",
                    rc,
                    errorName(rc),
                    "dst 0x" + Long.toHexString(dstDevice) + " src 0x" + Long.toHexString(srcHost) + " bytes " + bytes);
        }
    }

    public static void memcpyDtoH(long dstHost, long srcDevice, long bytes) {
        requireLoaded();
        check(CudaDriver.cuMemcpyDtoH_v2(dstHost, srcDevice, bytes), "cuMemcpyDtoH_v2", "bytes " + bytes);
    }

    public static void memcpyHtoD(long dstDevice, long srcHost, long bytes) {
        requireLoaded();
        check(CudaDriver.cuMemcpyHtoD_v2(dstDevice, srcHost, bytes), "cuMemcpyHtoD_v2", "bytes " + bytes);
    }

    // ---------------------------------------------------------------- host memory

    /** Page-locks and maps an existing host range for DMA ({@code flags}: {@link #CU_MEMHOSTREGISTER_PORTABLE}). */
    public static void memHostRegister(long hostPtr, long bytes, int flags) {
        requireLoaded();
        check(
                CudaDriver.cuMemHostRegister_v2(hostPtr, bytes, flags),
                "cuMemHostRegister_v2",
                "0x" + Long.toHexString(hostPtr) + " length " + bytes);
    }

    public static void memHostUnregister(long hostPtr) {
        requireLoaded();
        check(CudaDriver.cuMemHostUnregister(hostPtr), "cuMemHostUnregister", "0x" + Long.toHexString(hostPtr));
    }

    /** {@code cuMemHostAlloc} (the driver call behind {@code cudaHostAlloc}); benchmarks compare against it. */
    public static long memHostAlloc(long bytes, int flags) {
        requireLoaded();
        long[] p = new long[1];
        check(CudaDriver.cuMemHostAlloc(p, bytes, flags), "cuMemHostAlloc", "length " + bytes);
        return p[0];
    }

    /** The device address of a registered or mapped host address ({@code cuMemHostGetDevicePointer}). */
    public static long memHostGetDevicePointer(long hostPtr) {
        requireLoaded();
        long[] p = new long[1];
        check(
                CudaDriver.cuMemHostGetDevicePointer_v2(p, hostPtr, 0),
                "cuMemHostGetDevicePointer_v2",
                "0x" + Long.toHexString(hostPtr));
        return p[0];
    }

    public static void memFreeHost(long hostPtr) {
        requireLoaded();
        check(CudaDriver.cuMemFreeHost(hostPtr), "cuMemFreeHost", "");
    }

    // ---------------------------------------------------------------- device memory

    /** Free and total memory of the current context's device: {@code {free, total}}. */
    public static long[] memGetInfo() {
        requireLoaded();
        long[] free = new long[1];
        long[] total = new long[1];
        check(CudaDriver.cuMemGetInfo_v2(free, total), "cuMemGetInfo_v2", "");
        return new long[] {free[0], total[0]};
    }

    public static long memAlloc(long bytes) {
        requireLoaded();
        long[] p = new long[1];
        check(CudaDriver.cuMemAlloc_v2(p, bytes), "cuMemAlloc_v2", "length " + bytes);
        return p[0];
    }

    public static void memFree(long devicePtr) {
        requireLoaded();
        check(CudaDriver.cuMemFree_v2(devicePtr), "cuMemFree_v2", "");
    }

    public static void memsetD8(long devicePtr, int value, long count) {
        requireLoaded();
        check(CudaDriver.cuMemsetD8_v2(devicePtr, (byte) value, count), "cuMemsetD8_v2", "count " + count);
    }

    private static String cString(byte[] buf) {
        int n = 0;
        while (n < buf.length && buf[n] != 0) {
            n++;
        }
        return new String(buf, 0, n, StandardCharsets.US_ASCII);
    }
}
