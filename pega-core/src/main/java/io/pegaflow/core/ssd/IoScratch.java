package io.pegaflow.core.ssd;

import io.pegaflow.sys.Posix;
import java.nio.ByteBuffer;

/**
 * Page-aligned native scratch memory owned by one I/O thread: a header buffer, a page of zeros (entry padding) and an
 * iovec array for writes, or a read window for recovery. Anonymous mapping, so it is aligned for {@code O_DIRECT} and never on the Java heap.
 *
 * <p>Not thread-safe: one owner at a time. {@link #close()} unmaps; the owner must be done with every view.
 */
final class IoScratch implements AutoCloseable {
    /** Bytes of the zero run; at least the largest entry padding (4 KiB minus 512). */
    static final long ZERO_BYTES = ShardLayoutDescriptor.ENTRY_ALIGNMENT;

    private long address;
    private long sizeBytes;
    private final long headerBytes;
    private int iovCapacity;

    /**
     * @param headerBytes bytes reserved at the start for an entry header (or a read window)
     * @param iovCapacity iovecs reserved after it
     */
    IoScratch(long headerBytes, int iovCapacity) {
        this.headerBytes = roundToPage(headerBytes);
        map(iovCapacity);
    }

    private void map(int iovs) {
        this.iovCapacity = iovs;
        this.sizeBytes = headerBytes + ZERO_BYTES + roundToPage((long) iovs * NativeIo.IOVEC_BYTES);
        this.address = Posix.mmapAnonymous(sizeBytes, false);
    }

    /** A page-aligned run of zeros (never written) for padding entries to 4 KiB. */
    long zeroAddress() {
        return address + headerBytes;
    }

    private static long roundToPage(long bytes) {
        long page = Posix.pageSize();
        return Math.max(page, (bytes + page - 1) / page * page);
    }

    /** Start of the header buffer (page aligned). */
    long headerAddress() {
        return address;
    }

    long headerCapacity() {
        return headerBytes;
    }

    /** A little-endian view of the first {@code length} header bytes. */
    ByteBuffer headerView(long length) {
        return NativeIo.view(address, length);
    }

    /** Start of the iovec array, with room for at least {@code iovs} entries (remapped when it is smaller). */
    long iovAddress(int iovs) {
        if (iovs > iovCapacity) {
            Posix.munmap(address, sizeBytes);
            map(Math.max(iovs, iovCapacity * 2));
        }
        return address + headerBytes + ZERO_BYTES;
    }

    @Override
    public void close() {
        if (address != 0) {
            Posix.munmap(address, sizeBytes);
            address = 0;
        }
    }
}
