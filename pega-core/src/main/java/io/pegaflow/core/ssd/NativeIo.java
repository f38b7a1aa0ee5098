package io.pegaflow.core.ssd;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import io.pegaflow.sys.OffHeap;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The SSD tier's only raw-address code: {@code pwritev} (not among the shared libc bindings) and zero-copy
 * {@link ByteBuffer} views of native memory, used to checksum pool memory with {@link CRC32C} (whose direct-buffer
 * path is a JIT intrinsic) and to encode entry headers in place.
 *
 * <p>OFF-HEAP: a view is valid only while the memory behind it is: callers hold a reference on the pool allocation
 * or own the scratch mapping for as long as they use the view, and never let it escape.
 */
final class NativeIo {
    /** {@code IOV_MAX} on Linux: more iovecs per call fail with EINVAL. */
    static final int IOV_MAX = 1024;
    /** Bytes per {@code struct iovec}: base pointer and length. */
    static final int IOVEC_BYTES = 16;

    private NativeIo() {}

    private static final class Sys {
        static {
            Native.register(Sys.class, NativeLibrary.getInstance("c"));
        }

        static native long pwritev(int fd, long iov, int iovcnt, long offset) throws LastErrorException;
    }

    /** {@code pwritev}, retried on EINTR; returns the byte count or throws with the errno. */
    static long pwritev(int fd, long iovAddress, int iovCount, long offset) throws LastErrorException {
        for (; ; ) {
            try {
                return Sys.pwritev(fd, iovAddress, iovCount, offset);
            } catch (LastErrorException e) {
                if (e.getErrorCode() != 4) { // EINTR
                    throw e;
                }
            }
        }
    }

    /**
     * A little-endian view of {@code [address, address + length)}.
     *
     * <p>OFF-HEAP: see the class comment; {@code length} is at most {@link Integer#MAX_VALUE}.
     */
    static ByteBuffer view(long address, long length) {
        if (length < 0 || length > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("view length " + length);
        }
        return new Pointer(address).getByteBuffer(0, length).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Adds {@code [address, address + length)} to a running checksum, without copying it. */
    static void update(CRC32C crc, long address, long length) {
        long done = 0;
        while (done < length) {
            long chunk = Math.min(length - done, 1L << 30);
            crc.update(view(address + done, chunk));
            done += chunk;
        }
    }

    /** The CRC32C of {@code [address, address + length)}. */
    static int crc32c(long address, long length) {
        CRC32C crc = new CRC32C();
        update(crc, address, length);
        return (int) crc.getValue();
    }

    /** Writes iovec {@code index} of the array at {@code iovAddress}. */
    static void putIovec(long iovAddress, int index, long base, long length) {
        long at = iovAddress + (long) index * IOVEC_BYTES;
        OffHeap.putLong(at, base);
        OffHeap.putLong(at + 8, length);
    }
}
