package io.pegaflow.push.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Runs {@link PushSignalBench} inside surefire's classpath, on demand only:
 * {@code ./mvnw -o -pl pega-push -am test -Dtest=PushSignalBenchRun -Dsurefire.failIfNoSpecifiedTests=false
 * -Dpush.bench=true}. A measurement, never an assertion.
 */
class PushSignalBenchRun {
    @Test
    @EnabledIfSystemProperty(named = "push.bench", matches = "true")
    void run() throws Exception {
        PushSignalBench.main(new String[] {"2000", "500"});
    }
}
