package io.pegaflow.sys;

/**
 * A failed native call: names the call and carries errno (0 when the call reports failure without errno).
 *
 * <p>Unchecked, because every caller sits on a path that must either translate it into its own error (a gRPC status,
 * an unhealthy SSD shard) or fail startup.
 */
public final class NativeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int errno;

    public NativeException(String call, int errno, String detail) {
        super(call + " failed" + (errno != 0 ? " (errno " + errno + ")" : "")
                + (detail.isEmpty() ? "" : ": " + detail));
        this.call = call;
        this.errno = errno;
    }

    /** The native function that failed, for example {@code mmap}. */
    public String call() {
        return call;
    }

    /** The errno value, or 0 when none was reported. */
    public int errno() {
        return errno;
    }
}
