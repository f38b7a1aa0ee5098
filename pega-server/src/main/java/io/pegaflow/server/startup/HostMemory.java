package io.pegaflow.server.startup;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * What this process can still pin, read from the kernel before the pool is mapped: {@code MemAvailable} and the free
 * huge pages from {@code /proc/meminfo}, and, inside a container, the headroom under the cgroup's memory limit (a pod
 * sees the host's {@code MemAvailable}, but is OOM-killed at its own limit).
 *
 * @param availableBytes bytes the kernel can hand out without swapping or killing: the smaller of
 *     {@code MemAvailable} and the cgroup headroom; {@link Long#MAX_VALUE} when neither is known
 * @param source where {@code availableBytes} came from, for the message
 * @param hugePagesFreeBytes free pages of the default huge-page size, in bytes
 */
record HostMemory(long availableBytes, String source, long hugePagesFreeBytes) {

    static HostMemory read() {
        return parse(
                readLines(Path.of("/proc/meminfo")),
                firstLine(Path.of("/sys/fs/cgroup/memory.max")),
                firstLine(Path.of("/sys/fs/cgroup/memory.current")));
    }

    /** From the text of {@code /proc/meminfo} and the cgroup v2 files (null when absent). */
    static HostMemory parse(List<String> meminfo, @Nullable String cgroupMax, @Nullable String cgroupCurrent) {
        long memAvailable = Long.MAX_VALUE;
        long hugeFree = 0;
        long hugeSize = 0;
        for (String line : meminfo) {
            if (line.startsWith("MemAvailable:")) {
                memAvailable = kib(line);
            } else if (line.startsWith("HugePages_Free:")) {
                hugeFree = number(line);
            } else if (line.startsWith("Hugepagesize:")) {
                hugeSize = kib(line);
            }
        }
        long available = memAvailable;
        String source = memAvailable == Long.MAX_VALUE ? "unknown" : "MemAvailable";
        if (cgroupMax != null && cgroupCurrent != null && !cgroupMax.equals("max")) {
            long headroom = Math.max(0, Long.parseLong(cgroupMax) - Long.parseLong(cgroupCurrent));
            if (headroom < available) {
                available = headroom;
                source = "cgroup memory.max - memory.current";
            }
        }
        return new HostMemory(available, source, hugeFree * hugeSize);
    }

    private static long kib(String line) {
        return number(line) * 1024;
    }

    private static long number(String line) {
        // "MemAvailable:   23531584 kB": the number after the colon
        String rest = line.substring(line.indexOf(':') + 1).trim();
        int end = rest.indexOf(' ');
        return Long.parseLong(end < 0 ? rest : rest.substring(0, end));
    }

    private static List<String> readLines(Path p) {
        try {
            return Files.readAllLines(p, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return List.of();
        }
    }

    /** The file's first line, trimmed and lower-cased; null when it is absent, unreadable or empty. */
    private static @Nullable String firstLine(Path p) {
        List<String> lines = readLines(p);
        return lines.isEmpty() ? null : lines.get(0).trim().toLowerCase(Locale.ROOT);
    }
}
