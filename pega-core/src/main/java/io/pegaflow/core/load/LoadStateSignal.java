package io.pegaflow.core.load;

import io.pegaflow.core.error.EngineException;
import io.pegaflow.sys.LibC;
import io.pegaflow.sys.NativeException;
import io.pegaflow.sys.OffHeap;
import io.pegaflow.sys.Posix;
import java.util.regex.Pattern;

/**
 * The worker-created 32-byte shared-memory object through which a Load reports completion
 * (spec/engine-api.md §7). The worker polls it; the server writes it exactly once.
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
 * the final state with release ordering (the copied bytes happen-before the state a worker reads). If the worker
 * already unlinked the object (it gave up), the late write only fails quietly.
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

    /** Maps the object, validates it, optionally writes the state, unmaps. Returns a problem or null. */
    private String withMapping(long state, boolean write) {
        int fd = -1;
        long address = 0;
        long size = 0;
        try {
            fd = Posix.open(path, LibC.O_RDWR | LibC.O_NOFOLLOW, 0);
            size = Posix.fileSize(fd, path);
            if (size < MIN_SIZE_BYTES) {
                return "shared memory " + name + " is " + size + " bytes, expected at least " + MIN_SIZE_BYTES;
            }
            address = Posix.mmapShared(fd, size, path);
            // OFF-HEAP: the mapping is at least 32 bytes; off is checked against it before any other access.
            long off = OffHeap.getLong(address);
            if (off < 8 || off % 8 != 0 || off + 16 > size) {
                return "shared memory " + name + " has an invalid state offset " + off;
            }
            int magic = OffHeap.getIntAcquire(address + off);
            int version = OffHeap.getIntAcquire(address + off + 4);
            if (magic != MAGIC || version != VERSION) {
                return "shared memory " + name + " has magic 0x" + Integer.toHexString(magic) + " version " + version
                        + ", expected 0x" + Integer.toHexString(MAGIC) + " version " + VERSION;
            }
            if (write) {
                OffHeap.putLongRelease(address + off + 8, state);
            }
            return null;
        } catch (NativeException e) {
            return "cannot attach shared memory " + name + ": " + e.getMessage();
        } finally {
            if (address != 0) {
                Posix.munmap(address, size);
            }
            Posix.closeQuietly(fd);
        }
    }
}
