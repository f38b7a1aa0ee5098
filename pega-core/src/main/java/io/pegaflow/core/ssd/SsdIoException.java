package io.pegaflow.core.ssd;

/** A failed shard I/O, classified; thrown by {@link ShardFile} implementations and caught by the store's agents. */
final class SsdIoException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final SsdErrorKind kind;
    private final int errno;

    SsdIoException(SsdErrorKind kind, int errno, String message) {
        super(message, null, false, false);
        this.kind = kind;
        this.errno = errno;
    }

    static SsdIoException ofErrno(String call, int errno, String what) {
        return new SsdIoException(
                SsdErrorKind.ofErrno(errno), errno, call + " failed with errno " + errno + " on " + what);
    }

    SsdErrorKind kind() {
        return kind;
    }

    /** The errno, or 0 when the failure was not a failed call (short transfers, removed files). */
    int errno() {
        return errno;
    }
}
