package io.pegaflow.testkit;

import io.pegaflow.sys.LibC;
import io.pegaflow.sys.Posix;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

/**
 * A freshly created POSIX shared-memory object, mapped shared read-write: the common part of {@link ShmDeviceMemory}
 * and {@link LoadStateShm}.
 *
 * <p>Created the way glibc's {@code shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600)} does it (an {@code open} of
 * {@code /dev/shm/<name>} with {@code O_NOFOLLOW | O_CLOEXEC}), then {@code ftruncate}d to size (which zero-fills) and
 * {@code mmap}ed {@code MAP_SHARED}. The descriptor is closed right after mapping: the mapping keeps the object alive.
 *
 * <p>Thread-safe close: {@link #close()} unmaps and unlinks exactly once, whichever thread calls it first. Accessing
 * the address after close is the caller's bug (the owning classes check {@link #isClosed()} first).
 */
final class ShmMapping implements AutoCloseable {
    /** The host backend's name rule: no path, no traversal. */
    static final Pattern NAME = Pattern.compile("^pega_[A-Za-z0-9._-]{1,200}$");

    static final String SHM_DIR = "/dev/shm/";
    private static final int MODE_0600 = 0600;

    private final String name;
    private final long address;
    private final long sizeBytes;
    private final AtomicBoolean closed = new AtomicBoolean();

    private ShmMapping(String name, long address, long sizeBytes) {
        this.name = name;
        this.address = address;
        this.sizeBytes = sizeBytes;
    }

    /** Creates, sizes and maps {@code /dev/shm/<name>}; fails if it already exists. */
    static ShmMapping create(String name, long sizeBytes) {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("shm name must match " + NAME.pattern() + ": " + name);
        }
        if (sizeBytes <= 0) {
            throw new IllegalArgumentException("sizeBytes must be > 0: " + sizeBytes);
        }
        String path = SHM_DIR + name;
        int fd = Posix.open(path, LibC.O_CREAT | LibC.O_EXCL | LibC.O_RDWR | LibC.O_NOFOLLOW, MODE_0600);
        try {
            Posix.ftruncate(fd, sizeBytes, path);
            // OFF-HEAP: [address, address + sizeBytes) stays mapped until close(); the object is unlinked there too.
            long address = Posix.mmapShared(fd, sizeBytes, path);
            return new ShmMapping(name, address, sizeBytes);
        } catch (RuntimeException e) {
            Posix.unlinkQuietly(path);
            throw e;
        } finally {
            Posix.closeQuietly(fd);
        }
    }

    String name() {
        return name;
    }

    String path() {
        return SHM_DIR + name;
    }

    long address() {
        return address;
    }

    long sizeBytes() {
        return sizeBytes;
    }

    boolean isClosed() {
        return closed.get();
    }

    /** Unmaps and unlinks, exactly once; later calls do nothing. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            Posix.munmap(address, sizeBytes);
        } finally {
            Posix.unlinkQuietly(path());
        }
    }
}
