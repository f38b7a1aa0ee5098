package io.pegaflow.core.device.cuda;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.device.MappingCache;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.sys.cuda.Cuda;
import io.pegaflow.sys.cuda.CudaException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CUDA device backend: maps vLLM workers' KV tensors into this process with CUDA IPC and copies blocks between them
 * and the pinned pool with DMA on per-lane streams ({@code docs/gpu.md}).
 *
 * <pre>
 *   wrapper_bytes --restricted unpickler--> CudaIpcWrapper --uuid--> device ordinal (== request device_id)
 *        (device, 64-byte handle) --cuIpcOpenMemHandle once, MappingCache--> Mapping(base, allocation size)
 *        LayerMemory = base + storage offset (+ tensor offset), size = storage size
 *   copier per (instance, device): save lane {stream, event}, load lane {stream, event}, created on the lane thread
 *   per device: copy capabilities (batched copies, the copy kernel), found once; pega.cuda.copy-mode picks per plan
 * </pre>
 *
 * <p>Contexts: every device uses its primary context (retained once here, released on {@link #close}); a thread
 * makes it current before each driver call that needs it. The pinned pool's regions are registered once with
 * {@code CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP}, so they are pinned for every context and the copy
 * kernel reaches them.
 *
 * <p>Unmap safety: each device has a copy gate. Copies hold its read side from the first enqueue to the completed
 * synchronize; the last close of a mapping takes the write side before {@code cuIpcCloseMemHandle}, so an IPC mapping
 * is never closed under a copy in flight (the reference does not guard this).
 *
 * <p>Thread-safe. Owns: the retained primary contexts, the pool registration, the IPC mappings it opened.
 */
public final class CudaDeviceBackend implements DeviceBackend {
    private static final Logger log = LoggerFactory.getLogger(CudaDeviceBackend.class);

    /** {@code true}: lane threads sleep in event synchronize instead of spinning (saves a core per busy lane). */
    static final boolean BLOCKING_SYNC = Boolean.getBoolean("pega.cuda.blockingSync");

    private final int[] selected;
    private final Map<String, Integer> ordinalByUuid;
    private final CudaCopyConfig copyConfig;
    private final Map<Integer, DeviceState> devices = new ConcurrentHashMap<>();
    private final List<MemoryRegionInfo> registeredRegions = new ArrayList<>();
    private final long registeredBytes;
    private final double registrationSeconds;
    private final AtomicBoolean closed = new AtomicBoolean();

    private CudaDeviceBackend(int[] selected, Map<String, Integer> ordinalByUuid, CudaCopyConfig copyConfig) {
        this.selected = selected;
        this.ordinalByUuid = ordinalByUuid;
        this.copyConfig = copyConfig;
        this.registeredBytes = 0;
        this.registrationSeconds = 0;
    }

    private CudaDeviceBackend(CudaDeviceBackend init, long registeredBytes, double seconds) {
        this.selected = init.selected;
        this.ordinalByUuid = init.ordinalByUuid;
        this.copyConfig = init.copyConfig;
        this.devices.putAll(init.devices);
        this.registeredRegions.addAll(init.registeredRegions);
        this.registeredBytes = registeredBytes;
        this.registrationSeconds = seconds;
    }

    /** True when {@code libcuda} loads, initialises and sees at least one GPU. Never throws. */
    public static boolean isAvailable() {
        try {
            return Cuda.isAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    /** {@link #create(int[], List, CudaCopyConfig)} with the default copy settings. */
    public static CudaDeviceBackend create(int[] devicesOrEmptyForAll, List<MemoryRegionInfo> hostRegionsToRegister) {
        return create(devicesOrEmptyForAll, hostRegionsToRegister, CudaCopyConfig.defaults());
    }

    /**
     * Brings the backend up: retains the primary context of each selected device (all visible devices when
     * {@code devicesOrEmptyForAll} is empty), finds what each can copy with, and registers the pool's regions with the
     * driver.
     *
     * @throws EngineException INTERNAL {@code "failed to initialize CUDA: ..."} when the driver, a device or the
     *     registration fails; nothing stays retained or registered then
     */
    public static CudaDeviceBackend create(
            int[] devicesOrEmptyForAll, List<MemoryRegionInfo> hostRegionsToRegister, CudaCopyConfig copyConfig) {
        Cuda.Availability a = Cuda.probe();
        if (!a.usable()) {
            throw EngineException.cudaInit(a.reason().isEmpty() ? "no CUDA device" : a.reason(), null);
        }
        CudaDeviceBackend init = null;
        try {
            int count = Cuda.deviceCount();
            Map<String, Integer> byUuid = new LinkedHashMap<>();
            for (int i = 0; i < count; i++) {
                byUuid.put(Cuda.deviceUuid(Cuda.device(i)), i);
            }
            int[] selected = devicesOrEmptyForAll == null || devicesOrEmptyForAll.length == 0
                    ? java.util.stream.IntStream.range(0, count).toArray()
                    : devicesOrEmptyForAll.clone();
            for (int d : selected) {
                if (d < 0 || d >= count) {
                    throw EngineException.cudaInit(
                            "device " + d + " does not exist (" + count + " visible: 0.." + (count - 1) + ")", null);
                }
            }
            init = new CudaDeviceBackend(selected, Map.copyOf(byUuid), copyConfig);
            for (int d : selected) {
                init.device(d);
            }
            long bytes = 0;
            long t0 = NanoClock.SYSTEM.nanoTime();
            DeviceState first = java.util.Objects.requireNonNull(init.devices.get(selected[0]), "brought up above");
            Cuda.ctxSetCurrent(first.ctx);
            for (MemoryRegionInfo r : hostRegionsToRegister) {
                try {
                    Cuda.memHostRegister(
                            r.address(),
                            r.lengthBytes(),
                            Cuda.CU_MEMHOSTREGISTER_PORTABLE | Cuda.CU_MEMHOSTREGISTER_DEVICEMAP);
                } catch (CudaException e) {
                    throw EngineException.cudaInit("pinning the pool failed: " + e.getMessage(), e);
                }
                init.registeredRegions.add(r);
                bytes += r.lengthBytes();
            }
            double seconds = (NanoClock.SYSTEM.nanoTime() - t0) / 1e9;
            CudaDeviceBackend backend = new CudaDeviceBackend(init, bytes, seconds);
            log.info(
                    "cuda backend up: devices {} of {} (driver {}), pool registered {} GiB in {} s ({} s/GiB)",
                    Arrays.toString(selected),
                    count,
                    Cuda.driverVersion(),
                    String.format("%.2f", bytes / (double) (1L << 30)),
                    String.format("%.3f", seconds),
                    bytes > 0 ? String.format("%.4f", seconds / (bytes / (double) (1L << 30))) : "-");
            return backend;
        } catch (CudaException e) {
            if (init != null) {
                init.close();
            }
            throw EngineException.cudaInit(String.valueOf(e.getMessage()), e);
        } catch (RuntimeException e) {
            if (init != null) {
                init.close();
            }
            throw e;
        }
    }

    @Override
    public String name() {
        return "cuda";
    }

    /** The devices brought up at start (the reference's {@code --devices}). */
    public int[] selectedDevices() {
        return selected.clone();
    }

    /** Bytes of pool memory registered with the driver. */
    public long registeredBytes() {
        return registeredBytes;
    }

    /** Wall time {@code cuMemHostRegister} took for the whole pool, in seconds. */
    public double registrationSeconds() {
        return registrationSeconds;
    }

    /** NUMA node of a device ({@link CudaTopology#UNKNOWN_NODE} when the host does not say). */
    public int numaNode(int deviceId) {
        return device(deviceId).numaNode;
    }

    /** UUID of a device, as torch prints it. */
    public String deviceUuid(int deviceId) {
        return device(deviceId).uuid;
    }

    /** {@code {free, total}} bytes of a device (the driver's {@code cuMemGetInfo}). */
    public long[] memoryInfo(int deviceId) {
        DeviceState d = device(deviceId);
        Cuda.ctxSetCurrent(d.ctx);
        return Cuda.memGetInfo();
    }

    /** Number of distinct IPC mappings open on a device (for tests and the admin view). */
    public int openMappings(int deviceId) {
        DeviceState d = devices.get(deviceId);
        if (d == null) {
            return 0;
        }
        return d.mappings.size();
    }

    // ------------------------------------------------------------------ layers

    /**
     * {@inheritDoc}
     *
     * <p>The caller's identity is not checked here: a CUDA IPC handle is a capability that only its exporter hands
     * out (inside the pickle of the registration), unlike a shared-memory name anyone can list.
     */
    @Override
    public LayerMemory openLayer(Caller caller, int deviceId, byte[] wrapperBytes) {
        ensureOpen();
        CudaIpcWrapper w;
        try {
            w = CudaIpcWrapperUnpickler.decode(wrapperBytes);
        } catch (PickleRejectedException e) {
            throw EngineException.invalidArgument(
                    "wrapper_bytes is not a pegaflow CudaIPCWrapper pickle: " + e.getMessage());
        }
        Integer resolved = ordinalByUuid.get(w.deviceUuid());
        if (resolved == null) {
            throw EngineException.internal(
                    "register tensor failed: RuntimeError: Device UUID " + w.deviceUuid()
                            + " not found in the discovered devices. Please make sure the process can see all the"
                            + " GPU devices.",
                    null);
        }
        if (resolved != deviceId) {
            throw EngineException.internal(
                    "register tensor failed: context dev" + deviceId + " is pinned to device " + deviceId + " but got "
                            + resolved,
                    null);
        }
        long tensorOffset = w.tensorOffsetBytes();
        if (tensorOffset > w.storageSizeBytes()) {
            throw EngineException.invalidArgument("wrapper_bytes: storage_offset " + w.tensorStorageOffset()
                    + " lies past the storage of " + w.storageSizeBytes() + " bytes");
        }
        DeviceState d = device(deviceId);
        MappingCache.Entry<String, Mapping> m =
                d.mappings.acquire(java.util.HexFormat.of().formatHex(w.ipcHandle()));
        long end = w.storageOffsetBytes() + w.storageSizeBytes();
        long allocationBytes = m.mapping().allocationBytes();
        if (end < 0 || end > allocationBytes) {
            m.release();
            throw EngineException.invalidArgument("wrapper_bytes: storage [" + w.storageOffsetBytes() + ", " + end
                    + ") lies outside the shared allocation of " + allocationBytes + " bytes");
        }
        return new CudaLayerMemory(
                d, m, m.mapping().base() + w.storageOffsetBytes() + tensorOffset, w.storageSizeBytes() - tensorOffset);
    }

    @Override
    public DeviceCopier openCopier(int deviceId) {
        return openCopier(deviceId, copyConfig);
    }

    /** A copier with other copy settings than the backend's (benchmarks compare modes on one registration). */
    DeviceCopier openCopier(int deviceId, CudaCopyConfig config) {
        ensureOpen();
        return new CudaCopier(device(deviceId), config);
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw EngineException.unavailable("the CUDA device backend is closed");
        }
    }

    /** The state of one device, brought up on first use (an unselected but visible device is served lazily). */
    DeviceState device(int deviceId) {
        DeviceState d = devices.get(deviceId);
        if (d != null) {
            return d;
        }
        synchronized (devices) {
            d = devices.get(deviceId);
            if (d == null) {
                int count = ordinalByUuid.size();
                if (deviceId < 0 || deviceId >= count) {
                    throw EngineException.internal(
                            "register tensor failed: invalid device ordinal " + deviceId + " (" + count + " visible)",
                            null);
                }
                d = bringUp(deviceId);
                if (Arrays.stream(selected).noneMatch(s -> s == deviceId) && selected.length > 0) {
                    log.warn("device {} is not in pega.devices {}; serving it anyway", deviceId, selected);
                }
                log.info(
                        "cuda device {}: {} uuid {} pci {} numa {}", deviceId, "ready", d.uuid, d.pciBusId, d.numaNode);
                devices.put(deviceId, d);
            }
            return d;
        }
    }

    private DeviceState bringUp(int deviceId) {
        int dev;
        long ctx;
        try {
            dev = Cuda.device(deviceId);
            ctx = Cuda.primaryCtxRetain(dev);
        } catch (CudaException e) {
            throw EngineException.cudaInit("device " + deviceId + ": " + e.getMessage(), e);
        }
        try {
            Cuda.ctxSetCurrent(ctx);
            String bus = Cuda.pciBusId(dev);
            return new DeviceState(
                    deviceId,
                    dev,
                    ctx,
                    Cuda.deviceUuid(dev),
                    bus,
                    CudaTopology.numaNodeOfPciBusId(java.nio.file.Path.of("/sys/bus/pci/devices"), bus),
                    CopyCapabilities.discover(deviceId, dev, copyConfig));
        } catch (CudaException e) {
            try {
                Cuda.primaryCtxRelease(dev);
            } catch (CudaException release) {
                e.addSuppressed(release);
            }
            throw EngineException.cudaInit("device " + deviceId + ": " + e.getMessage(), e);
        }
    }

    /** The copy settings and what device {@code deviceId} can copy with (tests and the startup log). */
    CopyCapabilities copyCapabilities(int deviceId) {
        return device(deviceId).copy;
    }

    /**
     * Test seam for the kernel's failure path: the copy kernel's launch number {@code launchIndex} (0-based) of the
     * next kernel plan on this device is issued with an invalid block size, so the driver refuses it as it would any
     * failed launch. Fires once.
     */
    void failKernelLaunch(int deviceId, int launchIndex) {
        device(deviceId).kernelLaunchFault.set(launchIndex);
    }

    /**
     * Test seam for the batch's failure path: call number {@code callIndex} (0-based, in plan order) of the next
     * batched plan on this device is issued without attributes, which the driver refuses. Fires once.
     */
    void failBatchCall(int deviceId, int callIndex) {
        device(deviceId).batchCallFault.set(callIndex);
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (DeviceState d : devices.values()) {
            d.closeAllMappings();
            try {
                Cuda.ctxSetCurrent(d.ctx);
                d.copy.close();
            } catch (CudaException e) {
                log.warn("device {}: unloading the copy kernel failed: {}", d.ordinal, e.getMessage());
            }
        }
        if (!registeredRegions.isEmpty() && !devices.isEmpty()) {
            try {
                Cuda.ctxSetCurrent(devices.values().iterator().next().ctx);
                for (int i = registeredRegions.size() - 1; i >= 0; i--) {
                    try {
                        Cuda.memHostUnregister(registeredRegions.get(i).address());
                    } catch (CudaException e) {
                        log.warn("unregistering pool region failed: {}", e.getMessage());
                    }
                }
            } catch (CudaException e) {
                log.warn("cannot unregister the pool: {}", e.getMessage());
            }
        }
        for (DeviceState d : devices.values()) {
            try {
                Cuda.primaryCtxRelease(d.device);
            } catch (CudaException e) {
                log.warn("releasing the primary context of device {} failed: {}", d.ordinal, e.getMessage());
            }
        }
        devices.clear();
    }

    // ------------------------------------------------------------------ per device state

    /** One device: its primary context, its IPC mappings and its copy gate. */
    static final class DeviceState {
        final int ordinal;
        final int device;
        final long ctx;
        final String uuid;
        final String pciBusId;
        final int numaNode;
        /** What this device copies with, and the policy that picks per plan. */
        final CopyCapabilities copy;
        /** Read side: a copy in flight. Write side: closing a mapping. */
        final ReentrantReadWriteLock copyGate = new ReentrantReadWriteLock();
        /** Held by a small batched plan while it runs, when pega.cuda.serialize-below asks lanes to take turns. */
        final ReentrantLock copyTurn = new ReentrantLock();
        /** Test seam ({@link #failKernelLaunch}): launch index of the next kernel plan to fail, -1 for none. */
        final AtomicInteger kernelLaunchFault = new AtomicInteger(-1);
        /** Test seam ({@link #failBatchCall}): call index of the next batched plan to fail, -1 for none. */
        final AtomicInteger batchCallFault = new AtomicInteger(-1);
        /** Keyed by the handle's hex. */
        final MappingCache<String, Mapping> mappings = new MappingCache<>(this::open, this::unmap);

        DeviceState(
                int ordinal, int device, long ctx, String uuid, String pciBusId, int numaNode, CopyCapabilities copy) {
            this.ordinal = ordinal;
            this.copy = copy;
            this.device = device;
            this.ctx = ctx;
            this.uuid = uuid;
            this.pciBusId = pciBusId;
            this.numaNode = numaNode;
        }

        private Mapping open(String key) {
            byte[] handle = java.util.HexFormat.of().parseHex(key);
            long base;
            long size;
            try {
                Cuda.ctxSetCurrent(ctx);
                long t0 = NanoClock.SYSTEM.nanoTime();
                base = Cuda.ipcOpenMemHandle(handle);
                try {
                    size = Cuda.memGetAddressRange(base)[1];
                } catch (CudaException e) {
                    Cuda.ipcCloseMemHandle(base);
                    throw e;
                }
                log.debug(
                        "device {}: opened IPC allocation of {} bytes in {} us",
                        ordinal,
                        size,
                        (NanoClock.SYSTEM.nanoTime() - t0) / 1000);
            } catch (CudaException e) {
                throw EngineException.internal("register tensor failed: " + e.getMessage(), e);
            }
            return new Mapping(base, size);
        }

        /** The last layer's close: waits for in-flight copies on this device, then unmaps. */
        private void unmap(Mapping m) {
            copyGate.writeLock().lock();
            try {
                Cuda.ctxSetCurrent(ctx);
                Cuda.ipcCloseMemHandle(m.base());
            } catch (CudaException e) {
                log.warn("device {}: closing an IPC mapping failed: {}", ordinal, e.getMessage());
            } finally {
                copyGate.writeLock().unlock();
            }
        }

        void closeAllMappings() {
            int open = mappings.closeAll();
            if (open > 0) {
                log.warn("device {}: {} IPC mapping(s) were still open at backend close; unmapped", ordinal, open);
            }
        }
    }

    /** One opened IPC allocation; shared by its layers through the device's {@link MappingCache}. */
    record Mapping(long base, long allocationBytes) {}

    /** A layer: one reference on a mapping, given back exactly once. */
    static final class CudaLayerMemory implements LayerMemory {
        private final DeviceState device;
        private final MappingCache.Entry<String, Mapping> mapping;
        private final long base;
        private final long size;
        private final AtomicBoolean released = new AtomicBoolean();

        CudaLayerMemory(DeviceState device, MappingCache.Entry<String, Mapping> mapping, long base, long size) {
            this.device = device;
            this.mapping = mapping;
            this.base = base;
            this.size = size;
        }

        @Override
        public long baseAddress() {
            return base;
        }

        @Override
        public long sizeBytes() {
            return size;
        }

        @Override
        public void close() {
            if (released.compareAndSet(false, true)) {
                mapping.release();
            }
        }

        @Override
        public String toString() {
            return "CudaLayerMemory[dev " + device.ordinal + ", 0x" + Long.toHexString(base) + ", " + size + " B]";
        }
    }
}
