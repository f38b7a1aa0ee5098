package io.pegaflow.sys;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * Direct-mapped libc calls used by the pool, the host device backend and the SSD tier.
 *
 * <p>Addresses are passed as {@code long}: on x86-64 and aarch64 Linux a pointer is a 64-bit integer in the calling
 * convention, and keeping them primitive avoids a JNA {@code Pointer} object per call on hot paths. Every method that
 * can fail declares {@link LastErrorException}; callers go through {@link Posix}, which turns errno into a
 * {@link NativeException} naming the call.
 *
 * <p>Thread-safe: these are plain syscalls or libc functions.
 */
public final class LibC {
    static {
        Native.register(NativeLibrary.getInstance("c"));
    }

    public static final int PROT_READ = 0x1;
    public static final int PROT_WRITE = 0x2;
    public static final int MAP_SHARED = 0x01;
    public static final int MAP_PRIVATE = 0x02;
    public static final int MAP_ANONYMOUS = 0x20;
    public static final int MAP_NORESERVE = 0x4000;
    public static final int MAP_HUGETLB = 0x40000;
    public static final long MAP_FAILED = -1L;

    public static final int MADV_DONTNEED = 4;
    public static final int MADV_HUGEPAGE = 14;

    public static final int EINTR = 4;

    public static final int O_RDONLY = 0;
    public static final int O_RDWR = 2;
    public static final int O_CREAT = 0x40;
    public static final int O_EXCL = 0x80;
    public static final int O_TRUNC = 0x200;
    public static final int O_CLOEXEC = 0x80000;
    public static final int O_NOFOLLOW = 0x20000;
    /** x86-64 and aarch64 differ; resolved at class load from the architecture. */
    public static final int O_DIRECT = isAarch64() ? 0x10000 : 0x4000;

    public static final int SEEK_END = 2;

    private LibC() {}

    private static boolean isAarch64() {
        String arch = System.getProperty("os.arch", "");
        return arch.equals("aarch64") || arch.equals("arm64");
    }

    public static native long mmap(long addr, long length, int prot, int flags, int fd, long offset)
            throws LastErrorException;

    public static native int munmap(long addr, long length) throws LastErrorException;

    public static native int madvise(long addr, long length, int advice) throws LastErrorException;

    public static native int open(String path, int flags, int mode) throws LastErrorException;

    public static native int close(int fd) throws LastErrorException;

    public static native int ftruncate(int fd, long length) throws LastErrorException;

    public static native long lseek(int fd, long offset, int whence) throws LastErrorException;

    public static native int fsync(int fd) throws LastErrorException;

    public static native int fdatasync(int fd) throws LastErrorException;

    public static native int posix_fallocate(int fd, long offset, long len);

    public static native long pread(int fd, long buf, long count, long offset) throws LastErrorException;

    public static native long pwrite(int fd, long buf, long count, long offset) throws LastErrorException;

    public static native int unlink(String path) throws LastErrorException;

    public static native int getpid();

    public static native long process_vm_readv(
            int pid, long localIov, long localCount, long remoteIov, long remoteCount, long flags)
            throws LastErrorException;

    public static native long process_vm_writev(
            int pid, long localIov, long localCount, long remoteIov, long remoteCount, long flags)
            throws LastErrorException;

    /** Returns {@code dst}; never fails. Source and destination must not overlap. */
    public static native long memcpy(long dst, long src, long n);

    public static native long memset(long dst, int c, long n);

    public static native long syscall(long number, long a1, long a2, long a3, long a4, long a5, long a6)
            throws LastErrorException;

    public static native long sysconf(int name);
}
