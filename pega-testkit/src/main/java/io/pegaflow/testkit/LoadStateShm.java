package io.pegaflow.testkit;

import io.pegaflow.sys.OffHeap;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;

/**
 * The 32-byte completion object a worker creates for each Load, byte for byte as the reference worker's
 * {@code LoadState::new} (novitalabs/pegaflow v0.22.4):
 * {@code shm_open("pega_load_<32 lowercase hex>", O_CREAT | O_EXCL | O_RDWR, 0600)}, {@code ftruncate(32)},
 * {@code mmap} shared.
 *
 * <p>Layout, little-endian: u64 {@link #STATE_STRUCT_OFFSET} (= 8) at 0, u32 {@link #MAGIC} at 8, u32
 * {@link #VERSION} at 12, i64 state at 16 ({@link #PENDING} 0, {@link #SUCCESS} 1, any value below 0 is a failure),
 * padding to 32. Only the server writes the state, once.
 *
 * <p>Ownership: the creator owns it and must {@link #close()} it, which unmaps and unlinks the name exactly once, like
 * the reference's drop of {@code PyLoadState}; a server write after that fails to attach and is only logged.
 * {@link MockVllmWorker#load} creates and closes its own.
 *
 * <p>Thread-safety: {@link #state()} and {@link #awaitTerminal(Duration)} may be called from any thread while open.
 */
public final class LoadStateShm implements AutoCloseable {
    /** Size of the object in bytes. */
    public static final int SIZE_BYTES = 32;
    /** Value of the u64 at offset 0: where the state struct starts. */
    public static final long STATE_STRUCT_OFFSET = 8;
    /** {@code "PFLD"}. */
    public static final int MAGIC = 0x50464C44;

    public static final int VERSION = 1;
    public static final long PENDING = 0;
    public static final long SUCCESS = 1;
    /** The value the reference server writes on failure (any negative value counts as failure). */
    public static final long FAILURE = -1;

    /** Byte offset of the i64 state within the object (= {@link #STATE_STRUCT_OFFSET} + 8). */
    public static final int STATE_OFFSET = 16;

    private static final String NAME_PREFIX = "pega_load_";
    private static final long POLL_INTERVAL_NS = 1_000_000L;

    private final ShmMapping mapping;

    private LoadStateShm(ShmMapping mapping) {
        this.mapping = mapping;
    }

    /** Creates a pending load state under a fresh {@code pega_load_<uuid v4 simple>} name. */
    public static LoadStateShm create() {
        return createWithHeader(MAGIC, VERSION);
    }

    /**
     * Creates a load state with a chosen magic and version, for tests of the server's attach validation. The state
     * offset and state stay those of the reference ({@code 8}, {@code 0}).
     */
    public static LoadStateShm createWithHeader(int magic, int version) {
        String name = NAME_PREFIX + UUID.randomUUID().toString().replace("-", "");
        ShmMapping mapping = ShmMapping.create(name, SIZE_BYTES);
        try {
            // OFF-HEAP: aligned fields inside a fresh 32-byte mapping; ftruncate already zeroed state and padding.
            long base = mapping.address();
            OffHeap.putLong(base, STATE_STRUCT_OFFSET);
            OffHeap.putInt(base + STATE_STRUCT_OFFSET, magic);
            OffHeap.putInt(base + STATE_STRUCT_OFFSET + 4, version);
            return new LoadStateShm(mapping);
        } catch (RuntimeException e) {
            mapping.close();
            throw e;
        }
    }

    /** The name to put in {@code LoadRequest.load_state_shm}: no leading slash. */
    public String name() {
        return mapping.name();
    }

    /** {@code /dev/shm/<name>}. */
    public String path() {
        return mapping.path();
    }

    /** The current state, read with acquire ordering. */
    public long state() {
        if (mapping.isClosed()) {
            throw new IllegalStateException(name() + " is closed");
        }
        // OFF-HEAP: 8-byte aligned field inside the live 32-byte mapping.
        return OffHeap.getLongAcquire(mapping.address() + STATE_OFFSET);
    }

    /**
     * Polls {@link #state()} about every millisecond until it is not {@link #PENDING}.
     *
     * @return the terminal state: {@link #SUCCESS} or a negative failure value
     * @throws TestkitTimeoutException when the state is still pending after {@code timeout}
     */
    public long awaitTerminal(Duration timeout) {
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        while (true) {
            long state = state();
            if (state != PENDING) {
                return state;
            }
            if (System.nanoTime() - deadlineNs >= 0) {
                throw new TestkitTimeoutException("load state " + name() + " still pending after " + timeout);
            }
            LockSupport.parkNanos(POLL_INTERVAL_NS);
        }
    }

    public boolean isClosed() {
        return mapping.isClosed();
    }

    /** Unmaps and unlinks, exactly once; later calls do nothing. */
    @Override
    public void close() {
        mapping.close();
    }

    @Override
    public String toString() {
        return "LoadStateShm[" + name() + (isClosed() ? ", closed]" : "]");
    }
}
