package io.pegaflow.sys.cuda;

import com.sun.jna.NativeLibrary;
import io.pegaflow.sys.OffHeap;
import org.jspecify.annotations.Nullable;

/**
 * {@code cuMemcpyBatchAsync} (CUDA 13 signature, no {@code failIdx}): many pointer-to-pointer copies enqueued on one
 * stream by one driver call. The arrays it reads ({@code dsts}, {@code srcs}, {@code sizes}, the attributes) are
 * native memory the caller owns; the driver reads them during the call.
 *
 * <p>Availability is probed once and never throws: a driver older than CUDA 13 lacks the symbol, and
 * {@link #unavailableReason()} says so; callers then copy range by range.
 */
public final class CudaBatchCopy {
    /** {@code CU_MEMCPY_SRC_ACCESS_ORDER_STREAM}: the source is read in stream order (safe for memory others touch). */
    public static final int SRC_ACCESS_ORDER_STREAM = 0x1;
    /** {@code CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE}: a hint to keep the copies off the SMs. */
    public static final int FLAG_PREFER_OVERLAP_WITH_COMPUTE = 0x1;
    /** {@code sizeof(CUmemcpyAttributes)}: order (4), source hint (8), destination hint (8), flags (4). */
    public static final int ATTRIBUTES_BYTES = 24;
    /** Oldest driver that exports the signature bound here. */
    public static final int MIN_DRIVER_VERSION = 13000;

    /** Null until the first probe; then empty (usable) or the reason. */
    private static volatile @Nullable String unavailable;

    private CudaBatchCopy() {}

    /** Empty when the batch call can be used; otherwise why not (no driver, too old, symbol missing). Never throws. */
    public static String unavailableReason() {
        String u = unavailable;
        if (u != null) {
            return u;
        }
        synchronized (CudaBatchCopy.class) {
            String found = unavailable;
            if (found == null) {
                found = probe();
                unavailable = found;
            }
            return found;
        }
    }

    private static String probe() {
        Cuda.Availability a = Cuda.probe();
        if (!a.loaded()) {
            return a.reason();
        }
        if (a.driverVersion() < MIN_DRIVER_VERSION) {
            return "driver " + a.driverVersion() + " is older than CUDA 13 (" + MIN_DRIVER_VERSION + ")";
        }
        try {
            NativeLibrary.getInstance(Cuda.libraryName()).getFunction(CudaBatchDriver.SYMBOL);
            Class.forName(CudaBatchDriver.class.getName(), true, CudaBatchCopy.class.getClassLoader());
            return "";
        } catch (UnsatisfiedLinkError | ClassNotFoundException | ExceptionInInitializerError e) {
            return "the driver does not export " + CudaBatchDriver.SYMBOL + ": " + e.getMessage();
        }
    }

    /**
     * Writes one {@code CUmemcpyAttributes} at {@code address} (24 writable bytes): the given source order and flags,
     * no location hints (they only apply to managed and pageable memory).
     */
    public static void writeAttributes(long address, int srcAccessOrder, int flags) {
        // OFF-HEAP: the caller owns 24 bytes at address.
        OffHeap.putInt(address, srcAccessOrder);
        OffHeap.putLong(address + 4, 0L);
        OffHeap.putLong(address + 12, 0L);
        OffHeap.putInt(address + 20, flags);
    }

    /**
     * Enqueues {@code count} copies on {@code stream} (not the legacy NULL stream). Addresses are native pointers to
     * {@code count} 8-byte entries each; {@code attrs}/{@code attrsIdxs} hold {@code numAttrs} entries.
     *
     * @throws CudaException naming {@code cuMemcpyBatchAsync_v2} when the driver refuses the batch
     */
    public static void memcpyBatchAsync(
            long dsts, long srcs, long sizes, long count, long attrs, long attrsIdxs, long numAttrs, long stream) {
        int rc = CudaBatchDriver.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream);
        if (rc != Cuda.CUDA_SUCCESS) {
            throw new CudaException(CudaBatchDriver.SYMBOL, rc, Cuda.errorName(rc), "count " + count);
        }
    }
}
