package io.pegaflow.server.startup;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.web.server.PortInUseException;
import org.springframework.core.Ordered;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.FieldError;
import org.springframework.validation.ObjectError;

/**
 * Turns a startup failure caused by configuration into "key: value (expected: ...)" and a fix, which
 * {@link OneLineFailureReporter} prints as one line instead of a stack trace: the preflight's
 * {@link StartupCheckException}, a value that does not bind or fails validation, a port in use, and the engine's own
 * {@code IllegalArgumentException}s, whose messages start with the key. Anything else keeps its stack trace: it is a
 * bug, not a setting.
 */
public final class StartupFailureAnalyzer implements FailureAnalyzer, Ordered {
    /** A message that starts with the setting it is about: {@code pega.ssd.paths: ...}, {@code server.port=...}. */
    private static final Pattern NAMES_A_KEY =
            Pattern.compile("^(pega|spring|server|management)\\.[a-z0-9.\\-\\[\\]]+[:= ].*");

    private static final String SEE_DOCS = "correct that setting (every key is described in docs/configuration.md)";

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    @Override
    public @Nullable FailureAnalysis analyze(Throwable failure) {
        StartupCheckException check = find(failure, StartupCheckException.class);
        if (check != null) {
            return new FailureAnalysis(check.getMessage(), check.fix(), failure);
        }
        BindValidationException invalid = find(failure, BindValidationException.class);
        if (invalid != null) {
            return new FailureAnalysis(describe(invalid), SEE_DOCS, failure);
        }
        BindException unbindable = find(failure, BindException.class);
        if (unbindable != null) {
            return new FailureAnalysis(describe(unbindable), SEE_DOCS, failure);
        }
        PortInUseException port = find(failure, PortInUseException.class);
        if (port != null) {
            return new FailureAnalysis(
                    "server.port: " + port.getPort() + " (expected: a free port; another process listens on it)",
                    "stop that process or choose another server.port",
                    failure);
        }
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof IllegalArgumentException || t instanceof IllegalStateException) {
                String message = t.getMessage();
                if (message != null && NAMES_A_KEY.matcher(message).matches()) {
                    return new FailureAnalysis(message, SEE_DOCS, failure);
                }
            }
        }
        return null;
    }

    private static String describe(BindValidationException e) {
        List<String> parts = new ArrayList<>();
        for (ObjectError error : e.getValidationErrors()) {
            if (error instanceof FieldError field) {
                parts.add(error.getObjectName() + "." + field.getField() + ": " + field.getRejectedValue()
                        + Origins.describe(Origin.from(field)) + " (expected: " + error.getDefaultMessage() + ")");
            } else {
                parts.add(error.getObjectName() + ": " + error.getDefaultMessage());
            }
        }
        return String.join("; ", parts);
    }

    private static String describe(BindException e) {
        ConfigurationProperty p = e.getProperty();
        String value = p == null ? "(unset)" : p.getValue() + Origins.describe(p.getOrigin());
        return e.getName() + ": " + value + " (expected: "
                + expected(e.getTarget().getType().resolve()) + ")";
    }

    private static String expected(@Nullable Class<?> type) {
        if (type == null) {
            return "a value of the key's type";
        }
        if (type == DataSize.class) {
            return "a size such as 512MB or 2GB; B, KB or KiB, MB or MiB, GB or GiB, TB or TiB, all binary";
        }
        if (type == Duration.class) {
            return "a duration such as 500ms, 30s or 5m";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class) {
            return "a whole number";
        }
        return "a " + type.getSimpleName();
    }

    private static <T extends Throwable> @Nullable T find(Throwable failure, Class<T> type) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }
}
