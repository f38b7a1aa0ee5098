package io.pegaflow.sys;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;

/**
 * Batched copies inside this process through {@code process_vm_readv}/{@code process_vm_writev} on our own pid, for
 * mappings of objects another process owns.
 *
 * <p>Such an object can be shrunk ({@code ftruncate}) under our mapping at any time, and a load or store past its new
 * end raises SIGBUS in whichever thread made it; the JVM reports a fault in its own copy routines only
 * asynchronously, somewhere after the copy. The kernel copies these calls page by page through its own page-table
 * walk, so a missing page ends the transfer early with a short count instead of a signal. Up to {@link #MAX_RANGES}
 * ranges go in one system call.
 *
 * <p>Not thread-safe: one instance per copying thread (it owns two native iovec arrays, freed by {@link #close()}).
 */
public final class SelfVmCopy implements AutoCloseable {
    /** Ranges per system call: the kernel's IOV_MAX. */
    public static final int MAX_RANGES = 1024;

    private static final int IOVEC_BYTES = 16;
    private static final int PID = LibC.getpid();

    private final Memory local = new Memory((long) MAX_RANGES * IOVEC_BYTES);
    private final Memory remote = new Memory((long) MAX_RANGES * IOVEC_BYTES);
    private int count;
    private long requested;

    /**
     * Whether the kernel lets this process use the calls (a seccomp profile may forbid them). Copies one byte between
     * two words of native memory.
     */
    public static boolean available() {
        try (SelfVmCopy probe = new SelfVmCopy();
                Memory words = new Memory(16)) {
            long base = Pointer.nativeValue(words);
            probe.add(base, base + 8, 1);
            return probe.read() == 1;
        } catch (NativeException e) {
            return false;
        }
    }

    /** Adds one range: {@code length} bytes between {@code mine} (ours) and {@code theirs} (the foreign mapping). */
    public void add(long mine, long theirs, long length) {
        if (count == MAX_RANGES) {
            throw new IllegalStateException("more than " + MAX_RANGES + " ranges in one batch");
        }
        long at = (long) count * IOVEC_BYTES;
        local.setLong(at, mine);
        local.setLong(at + 8, length);
        remote.setLong(at, theirs);
        remote.setLong(at + 8, length);
        count++;
        requested += length;
    }

    public int size() {
        return count;
    }

    /** Bytes the added ranges ask for. */
    public long requestedBytes() {
        return requested;
    }

    /** Copies every added range from the foreign side into ours, clears the batch; returns the bytes copied. */
    public long read() {
        return transfer(false);
    }

    /** Copies every added range from our side into the foreign one, clears the batch; returns the bytes copied. */
    public long write() {
        return transfer(true);
    }

    private long transfer(boolean toForeign) {
        long l = Pointer.nativeValue(local);
        long r = Pointer.nativeValue(remote);
        int n = count;
        count = 0;
        requested = 0;
        if (n == 0) {
            return 0;
        }
        try {
            // OFF-HEAP: the kernel validates every foreign range itself; a page it cannot reach ends the transfer.
            return toForeign ? LibC.process_vm_writev(PID, l, n, r, n, 0) : LibC.process_vm_readv(PID, l, n, r, n, 0);
        } catch (LastErrorException e) {
            // EFAULT when the first range already fails: nothing was copied.
            if (e.getErrorCode() == EFAULT) {
                return 0;
            }
            throw new NativeException(toForeign ? "process_vm_writev" : "process_vm_readv", e.getErrorCode(), "");
        }
    }

    private static final int EFAULT = 14;

    @Override
    public void close() {
        local.close();
        remote.close();
    }
}
