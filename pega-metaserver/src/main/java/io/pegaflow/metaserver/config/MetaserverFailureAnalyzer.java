package io.pegaflow.metaserver.config;

import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.Ordered;

/**
 * A start that fails on a setting becomes "key: value (expected: ...)" and a fix, printed as one line by
 * {@link OneLineFailureReporter}: an unknown {@code pega.metaserver.*} key (with the key it resembles), or a value
 * {@link MetaserverProperties} or the address mapping refused. pega-server has the same pair for its own keys; the two
 * applications share no Spring module, so each carries its own.
 */
public final class MetaserverFailureAnalyzer implements FailureAnalyzer, Ordered {
    private static final String PREFIX = "pega.metaserver.";

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    @Override
    public @Nullable FailureAnalysis analyze(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof UnboundConfigurationPropertiesException unbound) {
                return unknownKeys(unbound, failure);
            }
            if (t instanceof IllegalArgumentException
                    && t.getMessage() != null
                    && t.getMessage().startsWith(PREFIX)) {
                return new FailureAnalysis(
                        t.getMessage(), "correct that setting (every key is described in docs/metaserver.md)", failure);
            }
        }
        return null;
    }

    private static FailureAnalysis unknownKeys(UnboundConfigurationPropertiesException e, Throwable failure) {
        List<String> parts = new ArrayList<>();
        for (ConfigurationProperty p : e.getUnboundProperties()) {
            String name = p.getName().toString();
            String like = suggest(name);
            parts.add(name + ": " + p.getValue() + (p.getOrigin() == null ? "" : " (" + p.getOrigin() + ")")
                    + " (expected: a key of pega-metaserver (docs/metaserver.md)"
                    + (like == null ? "" : "; did you mean " + like + "?") + ")");
        }
        return new FailureAnalysis(
                String.join("; ", parts),
                "correct or remove it, since Spring would ignore it and start with the default",
                failure);
    }

    /** The closest key of {@link MetaserverProperties}, or null when none is within a typo or two. */
    static @Nullable String suggest(String unknown) {
        @Nullable String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (RecordComponent c : MetaserverProperties.class.getRecordComponents()) {
            String known = PREFIX + c.getName().replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT);
            int d = distance(unknown, known);
            if (d < bestDistance) {
                bestDistance = d;
                best = known;
            }
        }
        return bestDistance <= Math.max(2, unknown.length() / 6) ? best : null;
    }

    /** Edit distance counting a swap of neighbouring characters as one edit (optimal string alignment). */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                int v = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    v = Math.min(v, d[i - 2][j - 2] + 1);
                }
                d[i][j] = v;
            }
        }
        return d[a.length()][b.length()];
    }
}
