package io.pegaflow.bench.loadgen;

import java.io.Console;
import java.io.PrintStream;
import java.util.Locale;

/**
 * A one-line progress bar on stderr, redrawn in place when stderr is a terminal; otherwise (CI logs, pipes) one
 * plain line every few seconds. Called from one thread.
 */
final class ProgressBar {
    private static final int WIDTH = 28;
    private static final long PLAIN_EVERY_NANOS = 5_000_000_000L;

    private final PrintStream out;
    private final boolean enabled;
    private final boolean terminal;
    private long lastPlain;
    private int lastLength;

    ProgressBar(PrintStream out, boolean enabled) {
        this.out = out;
        this.enabled = enabled;
        this.terminal = onTerminal();
    }

    /**
     * Whether the JVM runs on a terminal. Up to JDK 21 that is {@code System.console() != null}; from JDK 22 on there
     * is a console even when the streams are redirected, and {@code Console.isTerminal()} (not in the JDK 17 API this
     * module compiles against) tells.
     */
    @SuppressWarnings("SystemConsoleNull") // the null check is the JDK <= 21 half; isTerminal() covers JDK 22+
    private static boolean onTerminal() {
        Console console = System.console();
        if (console == null) {
            return false;
        }
        try {
            return (Boolean) Console.class.getMethod("isTerminal").invoke(console);
        } catch (NoSuchMethodException e) {
            return true;
        } catch (ReflectiveOperationException e) {
            return false;
        }
    }

    /** Draws {@code fraction} (0..1) done, with a status text after the bar. */
    void update(double fraction, String status) {
        if (!enabled) {
            return;
        }
        String line = render(fraction, status);
        if (terminal) {
            int pad = Math.max(0, lastLength - line.length());
            out.print("\r" + line + " ".repeat(pad));
            out.flush();
            lastLength = line.length();
        } else {
            long now = System.nanoTime();
            if (lastPlain == 0 || now - lastPlain >= PLAIN_EVERY_NANOS) {
                out.println(line);
                lastPlain = now;
            }
        }
    }

    /** Ends the bar's line. */
    void finish() {
        if (enabled && terminal && lastLength > 0) {
            out.println();
        }
    }

    static String render(double fraction, String status) {
        double f = Math.max(0, Math.min(1, fraction));
        int filled = (int) Math.round(f * WIDTH);
        StringBuilder sb = new StringBuilder(WIDTH + status.length() + 12);
        sb.append('[');
        for (int i = 0; i < WIDTH; i++) {
            sb.append(i < filled ? '#' : (i == filled ? '>' : '.'));
        }
        sb.append(String.format(Locale.ROOT, "] %3d%%  ", (int) Math.floor(f * 100)));
        return sb.append(status).toString();
    }
}
