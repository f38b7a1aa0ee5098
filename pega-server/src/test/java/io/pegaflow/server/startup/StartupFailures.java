package io.pegaflow.server.startup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.server.PegaServerApplication;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Starts of the whole server that must fail, and the one-line analysis an operator reads for them. */
public final class StartupFailures {
    private StartupFailures() {}

    /**
     * {@code extra} with small host-backend defaults (ephemeral ports, a 16 MB pool, WARN logging), each left out when
     * {@code extra} sets the same key (Spring would join both).
     */
    public static String[] hostArgs(String... extra) {
        List<String> args = new ArrayList<>(List.of(extra));
        for (String fallback : List.of(
                "--spring.grpc.server.port=0",
                "--server.port=0",
                "--pega.pool.size=16MB",
                "--pega.device.backend=host",
                "--logging.level.root=WARN")) {
            String key = fallback.substring(0, fallback.indexOf('=') + 1);
            if (args.stream().noneMatch(a -> a.startsWith(key))) {
                args.add(fallback);
            }
        }
        return args.toArray(String[]::new);
    }

    /**
     * The analysis of a start with {@code args}; fails the test when the server starts, or when the failure has no
     * one-line analysis.
     */
    public static FailureAnalysis analysisOf(String... args) {
        Throwable[] failure = new Throwable[1];
        assertThatThrownBy(() -> new SpringApplicationBuilder(PegaServerApplication.class)
                        .run(args)
                        .close())
                .satisfies(e -> failure[0] = e);
        FailureAnalysis analysis = new StartupFailureAnalyzer().analyze(failure[0]);
        assertThat(analysis).as("analysis of %s", failure[0]).isNotNull();
        return analysis;
    }

    /** {@link #analysisOf}'s description, which must be one line. */
    public static String descriptionOf(String... args) {
        String description = analysisOf(args).getDescription();
        assertThat(description).doesNotContain("\n");
        return description;
    }
}
