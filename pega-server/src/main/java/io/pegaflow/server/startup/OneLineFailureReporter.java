package io.pegaflow.server.startup;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalysisReporter;

/**
 * Prints an analysed startup failure as one ERROR line: what is wrong and how to fix it. Boot's own multi-line
 * reporter is switched off in the jar's {@code application.yml}, so the line is all an operator sees.
 */
public final class OneLineFailureReporter implements FailureAnalysisReporter {
    private static final Logger LOG = LoggerFactory.getLogger(OneLineFailureReporter.class);

    @Override
    public void report(FailureAnalysis analysis) {
        LOG.error("pega-server did not start: {}", line(analysis));
    }

    /** Description and action on one line. */
    static String line(FailureAnalysis analysis) {
        String text = analysis.getDescription().strip();
        if (analysis.getAction() != null && !analysis.getAction().isBlank()) {
            text += ". Fix: " + analysis.getAction().strip();
        }
        return text.replaceAll("\\s*\\R\\s*", " ");
    }
}
