package io.pegaflow.edge.log;

import org.jspecify.annotations.Nullable;

/**
 * Makes a client's string safe to put in one log line: CR, LF, TAB, every other C0 and C1 control character, DEL and
 * the Unicode line and paragraph separators become visible escapes ({@code \n}, {@code \r}, {@code \t},
 * {@code \u0085}...), and the result is cut at {@link #MAX_CHARS} characters with the number of characters left out.
 * Without it an instance id holding {@code "\n2026-12-06 ... WARN ... FORGED"} writes a second, forged log line, a NUL
 * in a namespace turns the log binary for grep, and a 60 MiB namespace is printed whole. Backslashes stay as they are:
 * they cannot end a line. Bidirectional overrides (RLO) are escaped too, since they make a line read differently from
 * what it holds.
 */
public final class LogSafe {

    /** The most characters of one value a log line shows: the bound is against megabytes, not against verbosity. */
    public static final int MAX_CHARS = 4096;

    private LogSafe() {}

    /** {@code String.valueOf(value)}, escaped and bounded; {@code "null"} for null. */
    public static String of(@Nullable Object value) {
        String text = String.valueOf(value);
        int limit = Math.min(text.length(), MAX_CHARS);
        int first = firstUnsafe(text, limit);
        if (first == limit && limit == text.length()) {
            return text; // the common case: nothing to escape, nothing to cut, no copy
        }
        StringBuilder out = new StringBuilder(limit + 16).append(text, 0, first);
        for (int i = first; i < limit; i++) {
            char c = text.charAt(i);
            if (unsafe(c)) {
                escape(c, out);
            } else {
                out.append(c);
            }
        }
        if (limit < text.length()) {
            out.append("...(").append(text.length() - limit).append(" more chars)");
        }
        return out.toString();
    }

    /** Whether {@code c} could end, hide or reorder part of a log line. */
    static boolean unsafe(char c) {
        return c < 0x20
                || (c >= 0x7f && c <= 0x9f)
                || c == '\u2028'
                || c == '\u2029'
                || (c >= '\u202a' && c <= '\u202e')
                || (c >= '\u2066' && c <= '\u2069');
    }

    private static int firstUnsafe(String text, int limit) {
        for (int i = 0; i < limit; i++) {
            if (unsafe(text.charAt(i))) {
                return i;
            }
        }
        return limit;
    }

    private static void escape(char c, StringBuilder out) {
        switch (c) {
            case '\n' -> out.append("\\n");
            case '\r' -> out.append("\\r");
            case '\t' -> out.append("\\t");
            default -> out.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int) c));
        }
    }
}
