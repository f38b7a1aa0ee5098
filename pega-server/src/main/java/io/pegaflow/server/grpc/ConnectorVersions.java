package io.pegaflow.server.grpc;

import io.pegaflow.core.instance.ConnectorGeneration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The connector versions this server accepts, each with its generation: the releases read from upstream's source
 * ({@code novitalabs/pegaflow} tags {@code v0.22.4} to {@code v0.23.12}), optionally the 0.24.x and 0.25.x releases
 * presumed to keep 0.23.12's wire, and what the operator added ({@code pega.compat.extra-versions}), narrowed to the
 * generations allowed ({@code pega.compat.generations}). Immutable.
 */
final class ConnectorVersions {
    /** Tags whose proto was diffed one by one (0.22.5 sends no version, like v0.22.4). */
    private static final Map<String, ConnectorGeneration> RELEASES = releases();
    /** Releases with no public source; their wire is presumed to be 0.23.12's. */
    private static final Pattern PRESUMED = Pattern.compile("0\\.2[45]\\.\\d+");

    private final Map<String, ConnectorGeneration> extra;
    private final Set<ConnectorGeneration> allowed;
    private final boolean presumed;

    /**
     * @param extraVersions {@code VERSION} or {@code VERSION=Gn} entries, already validated by their pattern
     * @throws IllegalArgumentException naming {@code pega.compat.extra-versions} for an entry listed twice
     */
    ConnectorVersions(List<String> extraVersions, Set<ConnectorGeneration> allowed, boolean presumed) {
        this.allowed = allowed.isEmpty() ? EnumSet.noneOf(ConnectorGeneration.class) : EnumSet.copyOf(allowed);
        this.presumed = presumed;
        this.extra = new LinkedHashMap<>();
        for (String entry : extraVersions) {
            int eq = entry.indexOf('=');
            String version = eq < 0 ? entry : entry.substring(0, eq);
            ConnectorGeneration generation =
                    eq < 0 ? implied(version) : ConnectorGeneration.valueOf(entry.substring(eq + 1));
            if (extra.put(version, generation) != null) {
                throw new IllegalArgumentException(
                        "pega.compat.extra-versions: " + version + " is listed twice (expected each version once)");
            }
        }
    }

    /** The generation of {@code clientVersion} (empty: G0), or empty when it is not accepted. */
    Optional<ConnectorGeneration> generationOf(String clientVersion) {
        ConnectorGeneration generation = clientVersion.isEmpty() ? ConnectorGeneration.G0 : extra.get(clientVersion);
        if (generation == null) {
            generation = RELEASES.get(clientVersion);
        }
        if (generation == null && presumed && PRESUMED.matcher(clientVersion).matches()) {
            generation = ConnectorGeneration.G3;
        }
        return generation != null && allowed.contains(generation) ? Optional.of(generation) : Optional.empty();
    }

    /** What is accepted, for the refusal's text: {@code <missing> (G0), 0.22.6-0.22.8 (G1), ...}. */
    String describe() {
        StringBuilder out = new StringBuilder();
        for (ConnectorGeneration g : ConnectorGeneration.values()) {
            if (!allowed.contains(g)) {
                continue;
            }
            if (out.length() > 0) {
                out.append(", ");
            }
            out.append(
                    switch (g) {
                        case G0 -> "<missing> (v0.22.4, 0.22.5)";
                        case G1 -> "0.22.6-0.22.8";
                        case G2 -> "0.22.9-0.23.6";
                        case G3 -> presumed ? "0.23.7-0.23.12, 0.24.x, 0.25.x" : "0.23.7-0.23.12";
                    });
        }
        extra.forEach((version, g) -> {
            if (allowed.contains(g)) {
                out.append(", ").append(version);
            }
        });
        return out.length() == 0 ? "none (pega.compat.generations is empty)" : out.toString();
    }

    /** A build tag ({@code 0.23.6+native-arena-v1}) speaks its release's wire; an unknown release the newest. */
    private static ConnectorGeneration implied(String version) {
        int plus = version.indexOf('+');
        ConnectorGeneration release = RELEASES.get(plus < 0 ? version : version.substring(0, plus));
        return release != null ? release : ConnectorGeneration.G3;
    }

    private static Map<String, ConnectorGeneration> releases() {
        Map<String, ConnectorGeneration> out = new LinkedHashMap<>();
        for (String v : List.of("0.22.6", "0.22.7", "0.22.8")) {
            out.put(v, ConnectorGeneration.G1);
        }
        for (String v :
                List.of("0.22.9", "0.22.10", "0.23.0", "0.23.1", "0.23.2", "0.23.3", "0.23.4", "0.23.5", "0.23.6")) {
            out.put(v, ConnectorGeneration.G2);
        }
        for (String v : List.of("0.23.7", "0.23.8", "0.23.9", "0.23.10", "0.23.11", "0.23.12")) {
            out.put(v, ConnectorGeneration.G3);
        }
        return Map.copyOf(out);
    }
}
