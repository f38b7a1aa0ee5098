package io.pegaflow.core.engine;

import io.pegaflow.sys.LibC;
import io.pegaflow.sys.OffHeap;
import io.pegaflow.sys.Posix;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@code /dev/shm} object created and mapped by the test, standing in for a worker's device memory or its 32-byte
 * load state (pega-core cannot use pega-testkit). Unmapped and unlinked once by {@link #close()}.
 */
final class TestShm implements AutoCloseable {
    private static final String DIR = "/dev/shm/";

    private final String name;
    private final long address;
    private final long sizeBytes;
    private final AtomicBoolean closed = new AtomicBoolean();

    private TestShm(String name, long address, long sizeBytes) {
        this.name = name;
        this.address = address;
        this.sizeBytes = sizeBytes;
    }

    /** A zero-filled object named {@code prefix + 32 hex}. */
    static TestShm create(String prefix, long sizeBytes) {
        String name = prefix + UUID.randomUUID().toString().replace("-", "");
        String path = DIR + name;
        int fd = Posix.open(path, LibC.O_CREAT | LibC.O_EXCL | LibC.O_RDWR | LibC.O_NOFOLLOW, 0600);
        try {
            Posix.ftruncate(fd, sizeBytes, path);
            return new TestShm(name, Posix.mmapShared(fd, sizeBytes, path), sizeBytes);
        } catch (RuntimeException e) {
            Posix.unlinkQuietly(path);
            throw e;
        } finally {
            Posix.closeQuietly(fd);
        }
    }

    /** A load state as the reference worker creates it: offset 8, magic, version 1, state 0. */
    static TestShm loadState() {
        TestShm shm = create("pega_load_", 32);
        OffHeap.putLong(shm.address, 8);
        OffHeap.putInt(shm.address + 8, 0x50464C44);
        OffHeap.putInt(shm.address + 12, 1);
        return shm;
    }

    String name() {
        return name;
    }

    /** The load state value (for objects made by {@link #loadState()}). */
    long state() {
        return OffHeap.getLongAcquire(address + 16);
    }

    /** The host backend's descriptor of a range of this object. */
    byte[] descriptor(long offsetBytes, long lengthBytes) {
        return ("{\"kind\":\"host-shm\",\"name\":\"" + name + "\",\"offset\":" + offsetBytes + ",\"size\":"
                        + lengthBytes + "}")
                .getBytes(StandardCharsets.UTF_8);
    }

    void write(long offsetBytes, byte[] bytes) {
        check(offsetBytes, bytes.length);
        Posix.copyFromArray(bytes, 0, address + offsetBytes, bytes.length);
    }

    byte[] read(long offsetBytes, int lengthBytes) {
        check(offsetBytes, lengthBytes);
        byte[] out = new byte[lengthBytes];
        Posix.copyToArray(address + offsetBytes, out, 0, lengthBytes);
        return out;
    }

    void zero(long offsetBytes, long lengthBytes) {
        check(offsetBytes, lengthBytes);
        Posix.memset(address + offsetBytes, 0, lengthBytes);
    }

    private void check(long offsetBytes, long lengthBytes) {
        if (closed.get() || offsetBytes < 0 || lengthBytes < 0 || offsetBytes > sizeBytes - lengthBytes) {
            throw new IndexOutOfBoundsException("[" + offsetBytes + ", +" + lengthBytes + ") outside " + name);
        }
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            Posix.munmap(address, sizeBytes);
            Posix.unlinkQuietly(DIR + name);
        }
    }
}
