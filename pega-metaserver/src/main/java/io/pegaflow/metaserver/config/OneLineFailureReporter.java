package io.pegaflow.metaserver.config;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalysisReporter;

/** An analysed startup failure as one ERROR line; Boot's multi-line reporter is off in {@code metaserver.yml}. */
public final class OneLineFailureReporter implements FailureAnalysisReporter {
    private static final Logger LOG = LoggerFactory.getLogger(OneLineFailureReporter.class);

    @Override
    public void report(FailureAnalysis analysis) {
        LOG.error("pega-metaserver did not start: {}", line(analysis));
    }

    static String line(FailureAnalysis analysis) {
        String text = analysis.getDescription().strip();
        if (analysis.getAction() != null && !analysis.getAction().isBlank()) {
            text += ". Fix: " + analysis.getAction().strip();
        }
        return text.replaceAll("\\s*\\R\\s*", " ");
    }
}
