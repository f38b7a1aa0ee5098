package io.pegaflow.server.startup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.server.PegaServerApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Starts of the whole server that must fail, and the one-line analysis an operator reads for them. */
public final class StartupFailures {
    private StartupFailures() {}

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
