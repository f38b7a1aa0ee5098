package io.pegaflow.server.startup;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.origin.Origin;

/** Where a value came from, as the one-line report names it. */
final class Origins {
    private Origins() {}

    /** {@code " (command line)"}, {@code " (class path resource [application.yml] - 12:5)"}, or empty. */
    static String describe(@Nullable Origin origin) {
        if (origin == null) {
            return "";
        }
        String text = origin.toString();
        return text.contains("\"commandLineArgs\"") ? " (command line)" : " (" + text + ")";
    }
}
