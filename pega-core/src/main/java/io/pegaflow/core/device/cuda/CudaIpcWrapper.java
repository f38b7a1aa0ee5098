package io.pegaflow.core.device.cuda;

import java.util.Arrays;
import java.util.HexFormat;
import org.jspecify.annotations.Nullable;

/**
 * The decoded content of the reference connector's pickled {@code pegaflow.ipc_wrapper.CudaIPCWrapper}
 * ({@code python/pegaflow/ipc_wrapper.py} of novitalabs/pegaflow v0.22.4): plain data, produced by
 * {@link CudaIpcWrapperUnpickler} without running anything.
 *
 * <pre>
 *   handle = ( producer_device : int,
 *              ipc_handle      : bytes,   -- see CudaIpcHandleFormat; ipcHandle() is the bare 64 bytes
 *              storage_size    : int,     -- S, bytes of the tensor's storage
 *              storage_offset  : int,     -- bytes of this storage past the start of the base allocation
 *              ref_counter     : bytes,   -- torch's IPC ref-counter shm name (ignored)
 *              ref_counter_off : int,
 *              event_handle    : bytes,   -- 64-byte cudaIpcEventHandle_t (ignored)
 *              event_sync      : bool )
 *   dtype, shape, stride (elements; absent in legacy pickles), storage_offset (elements), device_uuid
 * </pre>
 *
 * <p>Arrays are copied in and out; the record is immutable.
 */
public record CudaIpcWrapper(
        int producerDevice,
        CudaIpcHandleFormat handleFormat,
        int handleVersion,
        byte[] ipcHandle,
        long storageSizeBytes,
        long storageOffsetBytes,
        byte[] refCounterName,
        long refCounterOffset,
        byte[] eventHandle,
        boolean eventSyncRequired,
        TorchDtype dtype,
        long[] shape,
        long @Nullable [] stride,
        long tensorStorageOffset,
        String deviceUuid) {

    // the canonical constructor written out: NullAway reads a compact one's parameters as non-null, stride included
    public CudaIpcWrapper(
            int producerDevice,
            CudaIpcHandleFormat handleFormat,
            int handleVersion,
            byte[] ipcHandle,
            long storageSizeBytes,
            long storageOffsetBytes,
            byte[] refCounterName,
            long refCounterOffset,
            byte[] eventHandle,
            boolean eventSyncRequired,
            TorchDtype dtype,
            long[] shape,
            long @Nullable [] stride,
            long tensorStorageOffset,
            String deviceUuid) {
        this.producerDevice = producerDevice;
        this.handleFormat = handleFormat;
        this.handleVersion = handleVersion;
        this.ipcHandle = ipcHandle.clone();
        this.storageSizeBytes = storageSizeBytes;
        this.storageOffsetBytes = storageOffsetBytes;
        this.refCounterName = refCounterName.clone();
        this.refCounterOffset = refCounterOffset;
        this.eventHandle = eventHandle.clone();
        this.eventSyncRequired = eventSyncRequired;
        this.dtype = dtype;
        this.shape = shape.clone();
        this.stride = stride == null ? null : stride.clone();
        this.tensorStorageOffset = tensorStorageOffset;
        this.deviceUuid = deviceUuid;
    }

    @Override
    public byte[] ipcHandle() {
        return ipcHandle.clone();
    }

    @Override
    public byte[] refCounterName() {
        return refCounterName.clone();
    }

    @Override
    public byte[] eventHandle() {
        return eventHandle.clone();
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    /** Strides in elements, or null for a legacy pickle without them (the tensor is then contiguous). */
    @Override
    public long @Nullable [] stride() {
        return stride == null ? null : stride.clone();
    }

    /** Byte offset of the tensor's first element inside the storage ({@code storage_offset * element_size}). */
    public long tensorOffsetBytes() {
        return Math.multiplyExact(tensorStorageOffset, dtype.elementSize());
    }

    /** The 64-byte handle as lowercase hex: the key under which one base allocation is mapped once. */
    public String ipcHandleHex() {
        return HexFormat.of().formatHex(ipcHandle);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof CudaIpcWrapper w)) {
            return false;
        }
        return producerDevice == w.producerDevice
                && handleFormat == w.handleFormat
                && handleVersion == w.handleVersion
                && Arrays.equals(ipcHandle, w.ipcHandle)
                && storageSizeBytes == w.storageSizeBytes
                && storageOffsetBytes == w.storageOffsetBytes
                && Arrays.equals(refCounterName, w.refCounterName)
                && refCounterOffset == w.refCounterOffset
                && Arrays.equals(eventHandle, w.eventHandle)
                && eventSyncRequired == w.eventSyncRequired
                && dtype == w.dtype
                && Arrays.equals(shape, w.shape)
                && Arrays.equals(stride, w.stride)
                && tensorStorageOffset == w.tensorStorageOffset
                && deviceUuid.equals(w.deviceUuid);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(ipcHandle) * 31 + Long.hashCode(storageOffsetBytes);
    }

    @Override
    public String toString() {
        return "CudaIPCWrapper(shape=" + Arrays.toString(shape) + ", dtype=" + dtype + ", stride="
                + Arrays.toString(stride) + ", size=" + storageSizeBytes + ", offset=" + storageOffsetBytes
                + ", device_uuid=" + deviceUuid + ")";
    }
}
