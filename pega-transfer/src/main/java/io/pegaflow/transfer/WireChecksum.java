package io.pegaflow.transfer;

import com.sun.jna.Pointer;
import java.util.zip.CRC32C;

/**
 * The CRC32C of segments of native memory, as the owner of a block computes it before a peer reads the block and the
 * peer computes it again over what arrived (decision 0031 §3). The bytes are read in place through direct-buffer
 * views (whose {@link CRC32C} path is a JIT intrinsic); nothing is copied to the heap.
 *
 * <p>OFF-HEAP: every address must be readable for its length while the checksum runs: the owner holds the block's
 * transfer lock, the requester owns the allocation the gets wrote.
 */
public final class WireChecksum {
    /** A direct-buffer view holds at most an int's worth. */
    private static final long MAX_VIEW = 1L << 30;

    private final CRC32C crc = new CRC32C();

    /** Adds {@code [address, address + length)}; a zero length adds nothing. */
    public WireChecksum add(long address, long length) {
        if (length < 0) {
            throw new IllegalArgumentException("segment length " + length);
        }
        long done = 0;
        while (done < length) {
            long chunk = Math.min(length - done, MAX_VIEW);
            crc.update(new Pointer(address + done).getByteBuffer(0, chunk));
            done += chunk;
        }
        return this;
    }

    /** The checksum of everything added, as the unsigned 32 bits the wire carries. */
    public int value() {
        return (int) crc.getValue();
    }
}
