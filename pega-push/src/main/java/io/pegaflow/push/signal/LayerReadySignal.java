package io.pegaflow.push.signal;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.sys.LibC;
import io.pegaflow.sys.NativeException;
import io.pegaflow.sys.Posix;
import java.util.regex.Pattern;

/**
 * The prefill worker's 32-byte "layer L is ready" object, one per pushed request, polled by the prefill server's push
 * agent (docs/design/pd-push.md §2 chose it over a gRPC stream: a worker pays one store per layer, not a message).
 *
 * <pre>
 *   0           4           8           12          16                  24                  32
 *   +-----------+-----------+-----------+-----------+-------------------+-------------------+
 *   | magic u32 | version   | layers    | reserved  | ready (u64)       | abort (u64)       |
 *   | "PFLR"    | u32 = 1   | u32       | 0         | layers ready, 0.. | != 0: worker gave |
 *   |           |           |           |           | layers, monotonic | up on the request |
 *   +-----------+-----------+-----------+-----------+-------------------+-------------------+
 * </pre>
 *
 * Little-endian. The worker creates the object, maps it, and after layer {@code L}'s KV bytes are written (on a GPU:
 * after the layer's CUDA event completed) stores {@code ready = L + 1} with release semantics; layers become ready in
 * order. The server never maps the object (a worker that shrinks it would raise SIGBUS here, as for
 * {@code LoadStateSignal}): it keeps a descriptor open and reads the 16 bytes at offset 16 with {@code pread}, which
 * also orders the worker's earlier stores to the KV memory before the server's copy of them.
 *
 * <p>Owned by one push session; {@link #close()} closes the descriptor exactly once. Not thread-safe: only the push
 * agent reads it.
 */
public final class LayerReadySignal implements AutoCloseable {
    public static final int MAGIC = 0x524C4650; // "PFLR" read as a little-endian u32
    public static final int VERSION = 1;
    public static final int SIZE_BYTES = 32;
    static final long READY_OFFSET = 16;
    private static final Pattern NAME = Pattern.compile("^[A-Za-z0-9._-]{1,250}$");

    private final String name;
    private final int layers;
    private final Memory scratch = new Memory(16);
    private int fd;

    private LayerReadySignal(String name, int fd, int layers) {
        this.name = name;
        this.fd = fd;
        this.layers = layers;
    }

    /**
     * Opens and validates the named object.
     *
     * @param expectedLayers the layers the push will carry; the object must say the same
     * @throws EngineException INVALID_ARGUMENT naming what is wrong
     */
    public static LayerReadySignal open(String name, int expectedLayers) {
        String bare = name.startsWith("/") ? name.substring(1) : name;
        if (!NAME.matcher(bare).matches() || bare.equals(".") || bare.equals("..")) {
            throw EngineException.invalidArgument("layer_ready_shm: invalid shared-memory name '" + name + "'");
        }
        String path = "/dev/shm/" + bare;
        int fd;
        try {
            fd = Posix.open(path, LibC.O_RDONLY | LibC.O_NOFOLLOW, 0);
        } catch (NativeException e) {
            throw EngineException.invalidArgument("layer_ready_shm: cannot open " + bare + ": " + e.getMessage());
        }
        try (Memory header = new Memory(16)) {
            long size = Posix.fileSize(fd, path);
            if (size < SIZE_BYTES) {
                throw bad(bare, "is " + size + " bytes, expected at least " + SIZE_BYTES);
            }
            if (Posix.pread(fd, Pointer.nativeValue(header), 16, 0, path) < 16) {
                throw bad(bare, "is too short to hold its header");
            }
            int magic = header.getInt(0);
            int version = header.getInt(4);
            int layers = header.getInt(8);
            if (magic != MAGIC || version != VERSION) {
                throw bad(
                        bare,
                        "has magic 0x" + Integer.toHexString(magic) + " version " + version + ", expected 0x"
                                + Integer.toHexString(MAGIC) + " version " + VERSION);
            }
            if (layers != expectedLayers) {
                throw bad(bare, "announces " + layers + " layers, the push registration has " + expectedLayers);
            }
            return new LayerReadySignal(bare, fd, layers);
        } catch (RuntimeException e) {
            Posix.closeQuietly(fd);
            throw e;
        }
    }

    private static EngineException bad(String name, String why) {
        return EngineException.invalidArgument("layer_ready_shm: " + name + " " + why);
    }

    public String name() {
        return name;
    }

    public int layers() {
        return layers;
    }

    /**
     * One poll: the number of layers ready now (clamped to {@link #layers()}), or -1 when the worker set abort.
     *
     * @throws EngineException INTERNAL when the object cannot be read (closed or truncated under us)
     */
    public int poll() {
        if (fd < 0) {
            throw EngineException.storage("layer_ready_shm " + name + " is closed");
        }
        long address = Pointer.nativeValue(scratch);
        try {
            if (Posix.pread(fd, address, 16, READY_OFFSET, name) < 16) {
                throw EngineException.storage("layer_ready_shm " + name + " was truncated");
            }
        } catch (NativeException e) {
            throw EngineException.storage("layer_ready_shm " + name + ": " + e.getMessage(), e);
        }
        if (scratch.getLong(8) != 0) {
            return -1;
        }
        long ready = scratch.getLong(0);
        return ready < 0 ? 0 : (int) Math.min(ready, layers);
    }

    /** Idempotent. */
    @Override
    public void close() {
        if (fd >= 0) {
            Posix.closeQuietly(fd);
            fd = -1;
            scratch.close();
        }
    }
}
