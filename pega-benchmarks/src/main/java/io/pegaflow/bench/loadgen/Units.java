package io.pegaflow.bench.loadgen;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parsing and printing of byte sizes ({@code 64KiB}, {@code 2MB}, {@code 1024}) and rates. */
final class Units {
    private static final Pattern SIZE = Pattern.compile("^(\\d+)\\s*([kmgt]i?b?|b)?$", Pattern.CASE_INSENSITIVE);

    private Units() {}

    /**
     * Bytes in {@code text}: a plain number, or a number with {@code B}, {@code K}/{@code KB}/{@code KiB},
     * {@code M..}, {@code G..}, {@code T..}. Both decimal and binary suffixes mean powers of 1024, as in most KV-cache
     * tooling ({@code 64KB} = 65536).
     *
     * @throws IllegalArgumentException when the text is not a size
     */
    static long parseBytes(String text) {
        Matcher m = SIZE.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("not a size: '" + text + "' (expected e.g. 4096, 64KiB, 2MB)");
        }
        long value = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "b" : m.group(2).toLowerCase(Locale.ROOT);
        int shift = switch (unit.charAt(0)) {
            case 'k' -> 10;
            case 'm' -> 20;
            case 'g' -> 30;
            case 't' -> 40;
            default -> 0;
        };
        if (shift > 0 && value > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("size too large: '" + text + "'");
        }
        return value << shift;
    }

    /** {@code 65536} → {@code 64 KiB}. */
    static String formatBytes(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1 && v % 1024 == 0) {
            v /= 1024;
            u++;
        }
        if (v == Math.rint(v)) {
            return (long) v + " " + units[u];
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    /** A rate with a k/M/G suffix: {@code 12345.6} → {@code 12.3k}. */
    static String formatRate(double perSecond) {
        if (perSecond >= 1e9) {
            return String.format(Locale.ROOT, "%.2fG", perSecond / 1e9);
        }
        if (perSecond >= 1e6) {
            return String.format(Locale.ROOT, "%.2fM", perSecond / 1e6);
        }
        if (perSecond >= 1e3) {
            return String.format(Locale.ROOT, "%.1fk", perSecond / 1e3);
        }
        return String.format(Locale.ROOT, "%.1f", perSecond);
    }
}
