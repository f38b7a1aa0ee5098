package io.pegaflow.core.load;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.sys.LibC;
import io.pegaflow.sys.NativeException;
import io.pegaflow.sys.OffHeap;
import io.pegaflow.sys.Posix;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The worker-created 32-byte shared-memory object through which a Load reports completion (novitalabs/pegaflow v0.22.4,
 * {@code LoadState}). The worker polls it; the server writes it exactly once.
 *
 * <pre>
 *   0           8           12          16                  24          32
 *   +-----------+-----------+-----------+-------------------+-----------+
 *   | off (u64) | magic u32 | version   | state (i64)       | padding   |
 *   |   = 8     | "PFLD"    | u32 = 1   | 0 / 1 / -1        |           |
 *   +-----------+-----------+-----------+-------------------+-----------+
 *                ^ off
 * </pre>
 *
 * The server attaches by name, validates size, offset, alignment, magic and version, and later re-attaches to write
 * the final state. If the worker already unlinked the object (it gave up), the late write only fails quietly.
 *
 * <p>The object is the worker's, and the worker may shrink it at any time, so it is never mapped here (a mapped page
 * past a shrunk end raises SIGBUS): the header is read with {@code pread} and the state written with {@code pwrite}.
 * The state's bytes are written so that every intermediate value a worker's 64-bit read can see is already the final
 * verdict's sign: success changes only the low byte (0 to 1); failure writes the sign byte first (any value with it
 * set is negative, "error"), then the other seven. The system call orders the copied KV bytes before the state.
 */
public final class LoadStateSignal {
    public static final int MAGIC = 0x50464C44;
    public static final int VERSION = 1;
    public static final long STATE_SUCCESS = 1;
    public static final long STATE_FAILURE = -1;
    static final long MIN_SIZE_BYTES = 32;
    private static final Pattern NAME = Pattern.compile("^[A-Za-z0-9._-]{1,250}$");

    private final String name;
    private final String path;

    private LoadStateSignal(String name) {
        this.name = name;
        this.path = "/dev/shm/" + name;
    }

    /**
     * Validates the named object now, so a bad name fails the RPC before any lease is consumed.
     *
     * @throws EngineException INTERNAL {@code "storage error: LoadState: ..."}
     */
    public static LoadStateSignal attach(String name) {
        String bare = name.startsWith("/") ? name.substring(1) : name;
        if (!NAME.matcher(bare).matches() || bare.equals(".") || bare.equals("..")) {
            throw EngineException.storage("LoadState: invalid shared-memory name '" + name + "'");
        }
        LoadStateSignal signal = new LoadStateSignal(bare);
        String problem = signal.withMapping(0, false);
        if (problem != null) {
            throw EngineException.storage("LoadState: " + problem);
        }
        return signal;
    }

    public String name() {
        return name;
    }

    /** Writes 1. Returns false (and changes nothing) when the object is gone or no longer valid. */
    public boolean succeed() {
        return withMapping(STATE_SUCCESS, true) == null;
    }

    /** Writes -1. Returns false when the object is gone or no longer valid. */
    public boolean fail() {
        return withMapping(STATE_FAILURE, true) == null;
    }

    /** Opens the object, validates its header, optionally writes the state, closes. Returns a problem or null. */
    private @Nullable String withMapping(long state, boolean write) {
        int fd = -1;
        try (Memory header = new Memory(MIN_SIZE_BYTES)) {
            fd = Posix.open(path, LibC.O_RDWR | LibC.O_NOFOLLOW, 0);
            long size = Posix.fileSize(fd, path);
            if (size < MIN_SIZE_BYTES) {
                return "shared memory " + name + " is " + size + " bytes, expected at least " + MIN_SIZE_BYTES;
            }
            long buffer = Pointer.nativeValue(header);
            if (Posix.pread(fd, buffer, MIN_SIZE_BYTES, 0, path) < 16) {
                return "shared memory " + name + " is too short to hold its header";
            }
            long off = header.getLong(0);
            if (off < 8 || off % 8 != 0 || off + 16 > size) {
                return "shared memory " + name + " has an invalid state offset " + off;
            }
            if (Posix.pread(fd, buffer, 8, off, path) < 8) {
                return "shared memory " + name + " is too short to hold its state";
            }
            int magic = header.getInt(0);
            int version = header.getInt(4);
            if (magic != MAGIC || version != VERSION) {
                return "shared memory " + name + " has magic 0x" + Integer.toHexString(magic) + " version " + version
                        + ", expected 0x" + Integer.toHexString(MAGIC) + " version " + VERSION;
            }
            if (write) {
                writeState(fd, buffer, off + 8, state);
            }
            return null;
        } catch (NativeException e) {
            return "cannot attach shared memory " + name + ": " + e.getMessage();
        } finally {
            Posix.closeQuietly(fd);
        }
    }

    /** Writes the little-endian state so that no torn value a reader sees has the wrong sign (see the header). */
    private void writeState(int fd, long buffer, long at, long state) {
        // OFF-HEAP: buffer is the 32-byte scratch above; at + 8 <= size was checked by the caller.
        OffHeap.putLong(buffer, state);
        if (state < 0) {
            Posix.pwrite(fd, buffer + 7, 1, at + 7, path);
            Posix.pwrite(fd, buffer, 7, at, path);
        } else {
            Posix.pwrite(fd, buffer, 8, at, path);
        }
    }
}
