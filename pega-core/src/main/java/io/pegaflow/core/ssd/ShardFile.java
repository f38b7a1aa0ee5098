package io.pegaflow.core.ssd;

import java.nio.file.Path;

/**
 * One shard's file, opened for direct I/O. Offsets, lengths and addresses passed in are multiples of
 * {@link ShardLayoutDescriptor#SSD_ALIGNMENT}; callers check that.
 *
 * <p>Every method throws {@link SsdIoException} on failure and never anything else for an I/O problem. Positional
 * calls are thread-safe; {@link #resize} and {@link #close} are called by the owner alone.
 *
 * <p>This seam exists so that tests can inject the faults a real drive produces (EIO, ENOSPC, EROFS, short
 * transfers) into an otherwise real file.
 */
interface ShardFile extends AutoCloseable {

    Path path();

    long sizeBytes();

    /** Sets the file to exactly {@code bytes} and reserves its blocks where the filesystem supports it. */
    void resize(long bytes);

    /**
     * One {@code pwritev}: {@code iovCount} iovecs (16 bytes each: base, length) at {@code iovAddress}.
     *
     * @return the bytes written (may be short; the caller decides)
     */
    long writev(long iovAddress, int iovCount, long fileOffset);

    /**
     * One {@code pread} into native memory.
     *
     * @return the bytes read (may be short at the end of the file)
     */
    long read(long address, long length, long fileOffset);

    /** {@code fdatasync}. */
    void sync();

    /** Whether the path no longer names the opened file (deleted, or replaced by another inode). */
    boolean isReplaced();

    /** Closes the descriptor and its lock; idempotent. */
    @Override
    void close();

    /** Opens (creating if absent) the file at a path; {@code SsdStore} uses {@link DirectIoFile#open}. */
    @FunctionalInterface
    interface Opener {
        ShardFile open(Path path);
    }
}
