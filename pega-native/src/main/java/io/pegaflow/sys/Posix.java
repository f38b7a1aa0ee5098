package io.pegaflow.sys;

import com.sun.jna.LastErrorException;

/**
 * Checked wrappers over {@link LibC}: each returns the call's result or throws a {@link NativeException} that names
 * the call, its errno and the argument that matters to an operator (a path, a length).
 */
public final class Posix {
    private static final int SC_PAGESIZE = 30;
    /** mbind's syscall number differs per architecture (x86-64: 237, aarch64: 235). */
    private static final long SYS_MBIND = isAarch64() ? 235 : 237;
    /** {@code MPOL_BIND}: allocate only from the nodes in the mask. */
    public static final int MPOL_BIND = 2;

    private static final long PAGE_SIZE = LibC.sysconf(SC_PAGESIZE);

    private Posix() {}

    private static boolean isAarch64() {
        String arch = System.getProperty("os.arch", "");
        return arch.equals("aarch64") || arch.equals("arm64");
    }

    /** The base page size of this machine, in bytes. */
    public static long pageSize() {
        return PAGE_SIZE;
    }

    /** Maps anonymous private memory; with {@code hugeTlb} it comes from the reserved huge-page pool. */
    public static long mmapAnonymous(long lengthBytes, boolean hugeTlb) {
        int flags = LibC.MAP_PRIVATE | LibC.MAP_ANONYMOUS | LibC.MAP_NORESERVE | (hugeTlb ? LibC.MAP_HUGETLB : 0);
        try {
            long addr = LibC.mmap(0, lengthBytes, LibC.PROT_READ | LibC.PROT_WRITE, flags, -1, 0);
            if (addr == LibC.MAP_FAILED || addr == 0) {
                throw new NativeException("mmap", 0, "anonymous length " + lengthBytes);
            }
            return addr;
        } catch (LastErrorException e) {
            throw new NativeException("mmap", e.getErrorCode(), "anonymous length " + lengthBytes);
        }
    }

    /**
     * Maps anonymous private memory whose backing is accounted for at map time (no {@code MAP_NORESERVE}).
     *
     * <p>With {@code hugeTlb} the call fails with {@code ENOMEM} when too few huge pages are reserved, instead of
     * succeeding and raising {@code SIGBUS} on first touch; without it, strict overcommit refuses the mapping up front
     * rather than the OOM killer acting later. Use it for memory that is pre-touched right away (the pinned pool).
     */
    public static long mmapAnonymousCommitted(long lengthBytes, boolean hugeTlb) {
        int flags = LibC.MAP_PRIVATE | LibC.MAP_ANONYMOUS | (hugeTlb ? LibC.MAP_HUGETLB : 0);
        String what = (hugeTlb ? "anonymous hugetlb length " : "anonymous length ") + lengthBytes;
        try {
            long addr = LibC.mmap(0, lengthBytes, LibC.PROT_READ | LibC.PROT_WRITE, flags, -1, 0);
            if (addr == LibC.MAP_FAILED || addr == 0) {
                throw new NativeException("mmap", 0, what);
            }
            return addr;
        } catch (LastErrorException e) {
            throw new NativeException("mmap", e.getErrorCode(), what);
        }
    }

    /** Maps {@code lengthBytes} of an open file shared and read-write, from offset 0. */
    public static long mmapShared(int fd, long lengthBytes, String what) {
        try {
            long addr = LibC.mmap(0, lengthBytes, LibC.PROT_READ | LibC.PROT_WRITE, LibC.MAP_SHARED, fd, 0);
            if (addr == LibC.MAP_FAILED || addr == 0) {
                throw new NativeException("mmap", 0, what);
            }
            return addr;
        } catch (LastErrorException e) {
            throw new NativeException("mmap", e.getErrorCode(), what);
        }
    }

    /**
     * Reads up to {@code n} bytes at file {@code offset} into native memory at {@code dst}, retrying partial reads and
     * EINTR; returns the bytes read, fewer than {@code n} only at the end of the file.
     */
    public static long pread(int fd, long dst, long n, long offset, String what) {
        long done = 0;
        while (done < n) {
            long got;
            try {
                got = LibC.pread(fd, dst + done, n - done, offset + done);
            } catch (LastErrorException e) {
                if (e.getErrorCode() == LibC.EINTR) {
                    continue;
                }
                throw new NativeException("pread", e.getErrorCode(), what);
            }
            if (got == 0) {
                break;
            }
            done += got;
        }
        return done;
    }

    /** Writes all {@code n} bytes from native memory at {@code src} at file {@code offset}, retrying partial writes. */
    public static void pwrite(int fd, long src, long n, long offset, String what) {
        long done = 0;
        while (done < n) {
            try {
                done += LibC.pwrite(fd, src + done, n - done, offset + done);
            } catch (LastErrorException e) {
                if (e.getErrorCode() != LibC.EINTR) {
                    throw new NativeException("pwrite", e.getErrorCode(), what);
                }
            }
        }
    }

    public static void munmap(long addr, long lengthBytes) {
        try {
            LibC.munmap(addr, lengthBytes);
        } catch (LastErrorException e) {
            throw new NativeException("munmap", e.getErrorCode(), "length " + lengthBytes);
        }
    }

    /** Advises the kernel; returns false instead of throwing, because every advice we give is an optimisation. */
    public static boolean madvise(long addr, long lengthBytes, int advice) {
        try {
            return LibC.madvise(addr, lengthBytes, advice) == 0;
        } catch (LastErrorException e) {
            return false;
        }
    }

    /**
     * Binds a mapped range to one NUMA node before it is touched, so first-touch places every page there.
     *
     * @return false when the kernel refuses (no NUMA support, node absent); placement is then the kernel's default
     */
    public static boolean mbindToNode(long addr, long lengthBytes, int node) {
        if (node < 0 || node >= 64) {
            return false;
        }
        long mask = 1L << node;
        com.sun.jna.Memory nodemask = new com.sun.jna.Memory(8);
        nodemask.setLong(0, mask);
        try {
            return LibC.syscall(
                            SYS_MBIND, addr, lengthBytes, MPOL_BIND, com.sun.jna.Pointer.nativeValue(nodemask), 65, 0)
                    == 0;
        } catch (LastErrorException e) {
            return false;
        } finally {
            nodemask.close();
        }
    }

    public static int open(String path, int flags, int mode) {
        try {
            return LibC.open(path, flags | LibC.O_CLOEXEC, mode);
        } catch (LastErrorException e) {
            throw new NativeException("open", e.getErrorCode(), path);
        }
    }

    /** Closes quietly: a failing close on a descriptor we own leaves nothing to recover. */
    public static void closeQuietly(int fd) {
        if (fd < 0) {
            return;
        }
        try {
            LibC.close(fd);
        } catch (LastErrorException ignored) {
            // The descriptor is gone either way (Linux close semantics).
        }
    }

    /** The size of an open file, found by seeking to its end. */
    public static long fileSize(int fd, String what) {
        try {
            return LibC.lseek(fd, 0, LibC.SEEK_END);
        } catch (LastErrorException e) {
            throw new NativeException("lseek", e.getErrorCode(), what);
        }
    }

    public static void ftruncate(int fd, long lengthBytes, String what) {
        try {
            LibC.ftruncate(fd, lengthBytes);
        } catch (LastErrorException e) {
            throw new NativeException("ftruncate", e.getErrorCode(), what);
        }
    }

    public static void unlinkQuietly(String path) {
        try {
            LibC.unlink(path);
        } catch (LastErrorException ignored) {
            // Already gone: the caller only wants it absent.
        }
    }

    /**
     * Fills {@code n} bytes at a native address with the low byte of {@code value}.
     *
     * <p>OFF-HEAP: the caller guarantees {@code [dst, dst + n)} is mapped and writable.
     */
    public static void memset(long dst, int value, long n) {
        if (n > 0) {
            LibC.memset(dst, value, n);
        }
    }

    /**
     * Copies {@code length} bytes from a native address into a heap array. For test fixtures and diagnostics: KV
     * bytes never take this path in the engine.
     *
     * <p>OFF-HEAP: the caller guarantees {@code [src, src + length)} is mapped and readable.
     */
    public static void copyToArray(long src, byte[] dst, int dstIndex, int length) {
        if (length > 0) {
            new com.sun.jna.Pointer(src).read(0, dst, dstIndex, length);
        }
    }

    /**
     * Copies {@code length} bytes from a heap array to a native address. For test fixtures and diagnostics: KV bytes
     * never take this path in the engine.
     *
     * <p>OFF-HEAP: the caller guarantees {@code [dst, dst + length)} is mapped and writable.
     */
    public static void copyFromArray(byte[] src, int srcIndex, long dst, int length) {
        if (length > 0) {
            new com.sun.jna.Pointer(dst).write(0, src, srcIndex, length);
        }
    }

    /**
     * Copies between two native addresses with libc's memcpy.
     *
     * <p>OFF-HEAP: the caller guarantees both ranges are mapped for {@code n} bytes and do not overlap.
     */
    public static void memcpy(long dst, long src, long n) {
        if (n > 0) {
            LibC.memcpy(dst, src, n);
        }
    }
}
