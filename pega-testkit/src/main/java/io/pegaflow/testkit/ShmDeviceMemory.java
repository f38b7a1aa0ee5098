package io.pegaflow.testkit;

import io.pegaflow.sys.Posix;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * The "device memory" of a mock vLLM worker on the host backend: a POSIX shared-memory object
 * {@code /dev/shm/pega_dev_<32 hex>} that the server maps by name.
 *
 * <p>{@link #descriptor(long, long)} produces the host backend's {@code wrapper_bytes}, the UTF-8 JSON
 * {@code {"kind":"host-shm","name":"pega_...","offset":N,"size":N}}. The byte accessors copy through the heap; that is
 * fine for a test fixture and is never how the engine moves KV bytes.
 *
 * <p>Ownership: whoever calls {@link #create(long)} owns the object and must {@link #close()} it, which unmaps and
 * unlinks it exactly once (the {@code /dev/shm} entry disappears; a server that still maps it keeps its pages until it
 * unmaps). A {@link MockVllmWorker} closes the memories it allocated itself, never ones handed to its builder.
 *
 * <p>Thread-safety: accessors may run concurrently on disjoint ranges; nothing orders them against each other or
 * against the server's copies (callers sequence fills, RPCs and verifications). {@link #close()} is idempotent and safe
 * from any thread, but must not race with accessors still in progress.
 */
public final class ShmDeviceMemory implements AutoCloseable {
    /** The {@code kind} field of the host backend descriptor. */
    public static final String DESCRIPTOR_KIND = "host-shm";

    private static final String NAME_PREFIX = "pega_dev_";

    private final ShmMapping mapping;

    private ShmDeviceMemory(ShmMapping mapping) {
        this.mapping = mapping;
    }

    /** Creates a zero-filled object of {@code sizeBytes} under a fresh random name. */
    public static ShmDeviceMemory create(long sizeBytes) {
        return create(NAME_PREFIX + UUID.randomUUID().toString().replace("-", ""), sizeBytes);
    }

    /**
     * Creates a zero-filled object under a chosen name.
     *
     * @param name must match {@code ^pega_[A-Za-z0-9._-]{1,200}$} and must not exist yet
     */
    public static ShmDeviceMemory create(String name, long sizeBytes) {
        return new ShmDeviceMemory(ShmMapping.create(name, sizeBytes));
    }

    /**
     * The host backend descriptor for any name and range, unchecked: negative tests use it to name missing objects or
     * ranges outside one.
     */
    public static byte[] descriptorJson(String name, long offsetBytes, long sizeBytes) {
        String json = "{\"kind\":\"" + DESCRIPTOR_KIND + "\",\"name\":\"" + name + "\",\"offset\":" + offsetBytes
                + ",\"size\":" + sizeBytes + "}";
        return json.getBytes(StandardCharsets.UTF_8);
    }

    /** The shm name, without a leading slash, as it appears in descriptors. */
    public String name() {
        return mapping.name();
    }

    /** {@code /dev/shm/<name>}. */
    public String path() {
        return mapping.path();
    }

    /** The base address of this process's mapping; valid until {@link #close()}. */
    public long address() {
        checkOpen();
        return mapping.address();
    }

    public long sizeBytes() {
        return mapping.sizeBytes();
    }

    public boolean isClosed() {
        return mapping.isClosed();
    }

    /**
     * The descriptor of {@code [offsetBytes, offsetBytes + sizeBytes)} of this object, as a layer's
     * {@code wrapper_bytes}.
     *
     * @throws IllegalArgumentException when the range is not inside the object (use {@link #descriptorJson} to build
     *     an out-of-range descriptor on purpose)
     */
    public byte[] descriptor(long offsetBytes, long sizeBytes) {
        checkRange(offsetBytes, sizeBytes);
        return descriptorJson(name(), offsetBytes, sizeBytes);
    }

    /** Sets {@code lengthBytes} bytes from {@code offsetBytes} to {@code value}. */
    public void fill(long offsetBytes, long lengthBytes, byte value) {
        checkRange(offsetBytes, lengthBytes);
        // OFF-HEAP: range checked against the live mapping above.
        Posix.memset(mapping.address() + offsetBytes, value, lengthBytes);
    }

    /** Zeroes the whole object. */
    public void zero() {
        fill(0, sizeBytes(), (byte) 0);
    }

    /** Copies {@code lengthBytes} bytes from {@code offsetBytes} into a new heap array. */
    public byte[] readBytes(long offsetBytes, int lengthBytes) {
        checkRange(offsetBytes, lengthBytes);
        byte[] out = new byte[lengthBytes];
        // OFF-HEAP: range checked against the live mapping above.
        Posix.copyToArray(mapping.address() + offsetBytes, out, 0, lengthBytes);
        return out;
    }

    /** Copies all of {@code src} to {@code offsetBytes}. */
    public void writeBytes(long offsetBytes, byte[] src) {
        writeBytes(offsetBytes, src, 0, src.length);
    }

    /** Copies {@code src[srcIndex, srcIndex + lengthBytes)} to {@code offsetBytes}. */
    public void writeBytes(long offsetBytes, byte[] src, int srcIndex, int lengthBytes) {
        if (srcIndex < 0 || lengthBytes < 0 || srcIndex > src.length - lengthBytes) {
            throw new IndexOutOfBoundsException(
                    "src[" + srcIndex + ", +" + lengthBytes + ") outside array of " + src.length);
        }
        checkRange(offsetBytes, lengthBytes);
        // OFF-HEAP: range checked against the live mapping above.
        Posix.copyFromArray(src, srcIndex, mapping.address() + offsetBytes, lengthBytes);
    }

    /** Unmaps and unlinks the object, exactly once; later calls do nothing. */
    @Override
    public void close() {
        mapping.close();
    }

    @Override
    public String toString() {
        return "ShmDeviceMemory[" + name() + ", " + sizeBytes() + " bytes" + (isClosed() ? ", closed]" : "]");
    }

    private void checkRange(long offsetBytes, long lengthBytes) {
        checkOpen();
        if (offsetBytes < 0 || lengthBytes < 0 || offsetBytes > sizeBytes() - lengthBytes) {
            throw new IndexOutOfBoundsException(
                    "[" + offsetBytes + ", +" + lengthBytes + ") outside " + name() + " of " + sizeBytes() + " bytes");
        }
    }

    private void checkOpen() {
        if (mapping.isClosed()) {
            throw new IllegalStateException(name() + " is closed");
        }
    }
}
