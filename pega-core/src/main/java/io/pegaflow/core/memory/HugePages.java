package io.pegaflow.core.memory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

/** The kernel's default huge-page size, read from {@code /proc/meminfo}. */
public final class HugePages {
    private static final Path MEMINFO = Path.of("/proc/meminfo");
    private static final String KEY = "Hugepagesize:";

    private HugePages() {}

    /**
     * The default huge-page size in bytes ({@code Hugepagesize:} in {@code /proc/meminfo}, which is in kB).
     *
     * @throws IllegalStateException when the file is unreadable, has no such line, or the size exceeds an int
     */
    public static int sizeBytesFromMeminfo() {
        String meminfo;
        try {
            meminfo = Files.readString(MEMINFO);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + MEMINFO, e);
        }
        long bytes = parseSizeBytes(meminfo)
                .orElseThrow(() -> new IllegalStateException("no " + KEY + " line in " + MEMINFO));
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalStateException("huge page size " + bytes + " bytes does not fit an int");
        }
        return (int) bytes;
    }

    /** The {@code Hugepagesize:} value of a meminfo text, in bytes; empty when absent or malformed. */
    static OptionalLong parseSizeBytes(String meminfo) {
        for (String line : meminfo.split("\n", -1)) {
            if (!line.startsWith(KEY)) {
                continue;
            }
            String[] parts = line.substring(KEY.length()).trim().split("\\s+", -1);
            try {
                long kib = Long.parseLong(parts[0]);
                if (kib <= 0 || (parts.length > 1 && !parts[1].equalsIgnoreCase("kB"))) {
                    return OptionalLong.empty();
                }
                return OptionalLong.of(kib * 1024);
            } catch (NumberFormatException e) {
                return OptionalLong.empty();
            }
        }
        return OptionalLong.empty();
    }

    /** {@code bytes} rounded up to a whole number of pages of {@code pageBytes}. */
    static long roundUp(long bytes, long pageBytes) {
        return UnitScaledAllocator.ceilDiv(bytes, pageBytes) * pageBytes;
    }
}
