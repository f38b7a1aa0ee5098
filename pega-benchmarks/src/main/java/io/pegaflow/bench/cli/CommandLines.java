package io.pegaflow.bench.cli;

import java.time.Duration;
import java.util.Locale;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.ITypeConverter;

/**
 * Options of the benchmark tools, parsed by picocli into an object of {@code @Option} fields without I/O, so they are
 * unit-tested; the tool's {@code main} reports {@code --help} and bad options the same way for every tool
 * ({@link #parseOrExit}).
 */
public final class CommandLines {
    private static final Pattern DURATION = Pattern.compile("^(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)?$");

    private CommandLines() {}

    /** Thrown for {@code --help}; its message is the usage text. */
    public static final class HelpRequested extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public HelpRequested(String usage) {
            super(usage, null, false, false);
        }
    }

    /**
     * Fills {@code options}, a picocli {@code @Command} object, from {@code args}; ranges are the caller's to check.
     *
     * @throws IllegalArgumentException for an unknown option or a value refused (a converter's own message when it
     *     gave one: "not a duration: ..." says more than picocli's wrapper around it)
     * @throws HelpRequested for {@code --help} or {@code -h}
     */
    public static <T> T parse(T options, String... args) {
        CommandLine cl = new CommandLine(options);
        try {
            cl.parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            Throwable cause = e.getCause();
            throw new IllegalArgumentException(
                    cause instanceof IllegalArgumentException ? cause.getMessage() : e.getMessage(), e);
        }
        if (cl.isUsageHelpRequested() || cl.isVersionHelpRequested()) {
            throw new HelpRequested(cl.getUsageMessage());
        }
        return options;
    }

    /**
     * What a tool's {@code main} does with its arguments: the options, or null after printing the usage for
     * {@code --help}; a bad option prints the error and exits with status 2.
     */
    public static <T> @Nullable T parseOrExit(Function<String[], T> parser, String[] args) {
        try {
            return parser.apply(args);
        } catch (HelpRequested help) {
            System.out.print(help.getMessage());
            return null;
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println("(run with --help for the options)");
            System.exit(2);
            return null;
        }
    }

    /**
     * A duration: a number with {@code ms}, {@code s} (the default), {@code m} or {@code h}.
     *
     * @throws IllegalArgumentException when the text is not a duration
     */
    public static Duration parseDuration(String text) {
        Matcher m = DURATION.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("not a duration: '" + text + "' (expected e.g. 500ms, 30s, 2m)");
        }
        double value = Double.parseDouble(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        double millis = switch (unit) {
            case "ms" -> value;
            case "m" -> value * 60_000;
            case "h" -> value * 3_600_000;
            default -> value * 1000;
        };
        return Duration.ofNanos(Math.round(millis * 1_000_000));
    }

    /** {@link #parseDuration} for an {@code @Option(converter = ...)}. */
    public static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            return parseDuration(value);
        }
    }
}
