package io.pegaflow.server.ssd;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real ext4 filesystem of a few MiB on a loop device, for faults a drive really produces (decision 0016 §3): full,
 * read-only, gone. Needs root and permission to mount; {@link #available()} says whether this machine gives both (the
 * tests that need it are skipped otherwise, with the reason).
 */
final class LoopFilesystem implements AutoCloseable {
    /** ext4's (and XFS's) "going down" ioctl: every later I/O on the filesystem fails with EIO, as on a dead drive. */
    private static final long EXT4_IOC_SHUTDOWN = 0x8004587dL;

    private static final int GOING_FLAGS_NOLOGFLUSH = 2;
    private static volatile Boolean available;

    private final Path dir;
    private final Path image;
    private final Path mount;

    interface C extends Library {
        C LIB = Native.load("c", C.class);

        int open(String path, int flags);

        int ioctl(int fd, long request, int[] arg);

        int close(int fd);
    }

    private LoopFilesystem(Path dir) {
        this.dir = dir;
        this.image = dir.resolve("fs.img");
        this.mount = dir.resolve("mnt");
    }

    /** Whether loop mounts work here (root, a kernel and container that allow mount). */
    static boolean available() {
        Boolean known = available;
        if (known == null) {
            known = probe();
            available = known;
        }
        return known;
    }

    private static boolean probe() {
        try {
            LoopFilesystem fs = create("pega-loop-probe", 8, false);
            fs.close();
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** A fresh ext4 of {@code sizeMiB} mounted under a new temporary directory; read-only when asked. */
    static LoopFilesystem create(String prefix, int sizeMiB, boolean readOnly) throws IOException {
        LoopFilesystem fs = new LoopFilesystem(Files.createTempDirectory(prefix));
        try (RandomAccessFile img = new RandomAccessFile(fs.image.toFile(), "rw")) {
            img.setLength((long) sizeMiB << 20);
        }
        Files.createDirectories(fs.mount);
        run("mkfs.ext4", "-q", "-F", fs.image.toString());
        run("mount", "-o", readOnly ? "loop,ro" : "loop", fs.image.toString(), fs.mount.toString());
        return fs;
    }

    Path mount() {
        return mount;
    }

    /** Writes a filler file until the filesystem says it is full (ENOSPC); returns the bytes it took. */
    long fill() throws IOException {
        ByteBuffer chunk = ByteBuffer.allocate(1 << 20);
        long written = 0;
        try (FileChannel filler =
                FileChannel.open(mount.resolve("filler"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            while (true) {
                chunk.clear();
                written += filler.write(chunk);
            }
        } catch (IOException e) {
            if (!String.valueOf(e.getMessage()).contains("No space left")) {
                throw e;
            }
        }
        return written;
    }

    /** Takes the filesystem down under whoever has files open in it: their reads and writes fail with EIO. */
    void shutDown() {
        int fd = C.LIB.open(mount.toString(), 0);
        if (fd < 0) {
            throw new IllegalStateException("cannot open " + mount);
        }
        try {
            if (C.LIB.ioctl(fd, EXT4_IOC_SHUTDOWN, new int[] {GOING_FLAGS_NOLOGFLUSH}) != 0) {
                throw new IllegalStateException("EXT4_IOC_SHUTDOWN refused on " + mount);
            }
        } finally {
            C.LIB.close(fd);
        }
    }

    /** Detaches the mount (lazily: a server may still hold a shard open) and removes the image. */
    @Override
    public void close() throws IOException {
        try {
            run("umount", "-l", mount.toString());
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void run(String... command) throws IOException {
        Process p =
                new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + ": timed out");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(String.join(" ", command) + ": interrupted", e);
        }
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: "
                    + new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
        }
    }
}
