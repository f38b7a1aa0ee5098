package io.pegaflow.core.ssd;

/**
 * Why an SSD operation failed, as counted in {@code pegaflow_ssd_errors_total{kind}}. Every kind except
 * {@link #CHECKSUM}, {@link #UNALIGNED} and {@link #OVERSIZED} takes the shard out of service (see
 * {@link SsdStore}).
 */
public enum SsdErrorKind {
    /** EIO or any errno without a more specific kind. */
    IO_ERROR("io_error"),
    /** ENOSPC, EDQUOT, EFBIG. */
    NO_SPACE("no_space"),
    /** EROFS, EACCES, EPERM, EBADF: the file cannot be written (or read) through its descriptor any more. */
    READ_ONLY("read_only"),
    /** The shard's path no longer names the file that was opened (deleted or replaced). */
    FILE_REMOVED("file_removed"),
    /** A read returned fewer bytes than the entry holds (the file was truncated underneath). */
    SHORT_READ("short_read"),
    /** A write stored fewer bytes than requested. */
    SHORT_WRITE("short_write"),
    /** An entry's payload did not match its CRC32C: that entry is dropped, the shard stays in service. */
    CHECKSUM("checksum"),
    /** A block whose segments are not 512-byte aligned (the host alignment was not raised): not written. */
    UNALIGNED("unaligned"),
    /** A block larger than a shard or with a layout too large for an entry header: not written. */
    OVERSIZED("oversized");

    private final String label;

    SsdErrorKind(String label) {
        this.label = label;
    }

    /** The metric label value. */
    public String label() {
        return label;
    }

    /** Whether this kind takes the shard out of service. */
    public boolean disablesShard() {
        return this != CHECKSUM && this != UNALIGNED && this != OVERSIZED;
    }

    /** The kind of a failed system call's errno. */
    static SsdErrorKind ofErrno(int errno) {
        return switch (errno) {
            case 28, 122, 27 -> NO_SPACE; // ENOSPC, EDQUOT, EFBIG
            case 30, 13, 1, 9 -> READ_ONLY; // EROFS, EACCES, EPERM, EBADF
            case 2, 116 -> FILE_REMOVED; // ENOENT, ESTALE
            default -> IO_ERROR;
        };
    }
}
