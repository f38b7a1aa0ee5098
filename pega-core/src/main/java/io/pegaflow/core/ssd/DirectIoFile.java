package io.pegaflow.core.ssd;

import com.sun.jna.LastErrorException;
import io.pegaflow.sys.LibC;
import io.pegaflow.sys.NativeException;
import io.pegaflow.sys.Posix;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A shard file opened {@code O_RDWR | O_DIRECT}: writes go from pool memory straight to the device, reads straight
 * into pool memory, with no page cache and no heap copy.
 *
 * <p>The file is also locked ({@code fcntl} record lock through a second descriptor) so that two processes never
 * share a shard; the lock dies with the process, so a restart after {@code kill -9} takes it again.
 */
final class DirectIoFile implements ShardFile {
    private final Path path;
    private final int fd;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final Object inode;
    private final AtomicBoolean closed = new AtomicBoolean();

    private DirectIoFile(Path path, int fd, FileChannel lockChannel, FileLock lock, Object inode) {
        this.path = path;
        this.fd = fd;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.inode = inode;
    }

    /**
     * Opens or creates {@code path} (and its parent directories).
     *
     * @throws IllegalStateException when the file cannot be opened for direct I/O or another process holds it
     */
    static DirectIoFile open(Path path) {
        FileChannel channel = null;
        int fd = -1;
        try {
            Path parent = path.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            channel = FileChannel.open(
                    path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                throw new IllegalStateException("pega.ssd.paths: " + path + " is in use by another process");
            }
            fd = Posix.open(path.toString(), LibC.O_RDWR | LibC.O_DIRECT, 0);
            Object inode = Files.getAttribute(path, "unix:ino", LinkOption.NOFOLLOW_LINKS);
            return new DirectIoFile(path, fd, channel, lock, inode);
        } catch (IOException | NativeException | UnsupportedOperationException e) {
            Posix.closeQuietly(fd);
            closeQuietly(channel);
            throw new IllegalStateException(
                    "pega.ssd.paths: " + path + " cannot be opened for direct I/O (" + e.getMessage() + ")", e);
        } catch (RuntimeException e) {
            Posix.closeQuietly(fd);
            closeQuietly(channel);
            throw e;
        }
    }

    @Override
    public Path path() {
        return path;
    }

    @Override
    public long sizeBytes() {
        try {
            return LibC.lseek(fd, 0, LibC.SEEK_END);
        } catch (LastErrorException e) {
            throw SsdIoException.ofErrno("lseek", e.getErrorCode(), path.toString());
        }
    }

    @Override
    public void resize(long bytes) {
        try {
            LibC.ftruncate(fd, bytes);
        } catch (LastErrorException e) {
            throw SsdIoException.ofErrno("ftruncate", e.getErrorCode(), path.toString());
        }
        int rc = LibC.posix_fallocate(fd, 0, bytes);
        // EOPNOTSUPP / EINVAL: the filesystem cannot reserve blocks; the file stays sparse, as the reference's is.
        if (rc != 0 && rc != 95 && rc != 22) {
            throw SsdIoException.ofErrno("posix_fallocate", rc, path + " (" + bytes + " bytes)");
        }
    }

    @Override
    public long writev(long iovAddress, int iovCount, long fileOffset) {
        try {
            return NativeIo.pwritev(fd, iovAddress, iovCount, fileOffset);
        } catch (LastErrorException e) {
            throw SsdIoException.ofErrno("pwritev", e.getErrorCode(), path + " at " + fileOffset);
        }
    }

    @Override
    public long read(long address, long length, long fileOffset) {
        long done = 0;
        while (done < length) {
            long n;
            try {
                n = LibC.pread(fd, address + done, length - done, fileOffset + done);
            } catch (LastErrorException e) {
                if (e.getErrorCode() == 4) { // EINTR
                    continue;
                }
                throw SsdIoException.ofErrno("pread", e.getErrorCode(), path + " at " + (fileOffset + done));
            }
            if (n <= 0) {
                break; // end of file: the caller sees a short count
            }
            done += n;
        }
        return done;
    }

    @Override
    public void sync() {
        try {
            LibC.fdatasync(fd);
        } catch (LastErrorException e) {
            throw SsdIoException.ofErrno("fdatasync", e.getErrorCode(), path.toString());
        }
    }

    @Override
    public boolean isReplaced() {
        try {
            return !Objects.equals(inode, Files.getAttribute(path, "unix:ino", LinkOption.NOFOLLOW_LINKS));
        } catch (NoSuchFileException e) {
            return true;
        } catch (IOException e) {
            return true;
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Posix.closeQuietly(fd);
        try {
            lock.release();
        } catch (IOException ignored) {
            // Closing the channel drops the lock anyway.
        }
        closeQuietly(lockChannel);
    }

    private static void closeQuietly(@Nullable FileChannel channel) {
        if (channel == null) {
            return;
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // Nothing left to recover on a descriptor we are discarding.
        }
    }

    @Override
    public String toString() {
        return "DirectIoFile[" + path + "]";
    }
}
