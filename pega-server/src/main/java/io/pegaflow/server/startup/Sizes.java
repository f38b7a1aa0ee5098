package io.pegaflow.server.startup;

import java.util.Locale;
import org.springframework.util.unit.DataSize;

/** Byte counts in the units the configuration accepts, so a message's figure can be pasted back as a value. */
final class Sizes {
    private static final long MIB = 1L << 20;
    private static final long GIB = 1L << 30;

    private Sizes() {}

    /** {@code bytes} rounded down to whole GB (from 10 GB) or MB: what fits, written as a setting. */
    static String floor(long bytes) {
        if (bytes <= 0) {
            return "0B";
        }
        return bytes >= 10 * GIB ? bytes / GIB + "GB" : bytes / MIB + "MB";
    }

    /** {@code size} as an operator writes it: {@code 64GB}, {@code 1536MB}, {@code 4097B}. */
    static String setting(DataSize size) {
        long bytes = size.toBytes();
        String[] units = {"B", "KB", "MB", "GB", "TB"};
        int u = 0;
        while (u < units.length - 1 && bytes != 0 && bytes % 1024 == 0) {
            bytes /= 1024;
            u++;
        }
        return bytes + units[u];
    }

    /** {@code bytes} for reading, e.g. {@code 20.5 GiB}. */
    static String human(long bytes) {
        if (bytes >= GIB) {
            return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) GIB);
        }
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (double) MIB);
    }
}
