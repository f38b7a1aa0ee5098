package io.pegaflow.server.startup;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.server.PegaServerApplication;
import io.pegaflow.testkit.ChildJvm;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What an operator sees when a start fails on a setting: the whole output of a real server process. */
@Timeout(120)
class OneLineStartupFailureTest {

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "--pega.pool.sise=1GB, 'pega.pool.sise: 1GB (command line)', did you mean pega.pool.size?",
        // A value that fails binding: the web server starts before the properties bind, and must not report it too.
        "--pega.pool.shards=0, 'pega.pool.shards: 0', must be greater than or equal to 1"
    })
    void shouldPrintOneErrorLineAndNoStackTrace(String setting, String names, String explains) throws Exception {
        ChildJvm child = ChildJvm.runToExit(
                "server with a typo",
                dir,
                List.of(
                        "-cp",
                        System.getProperty("java.class.path"),
                        PegaServerApplication.class.getName(),
                        "--spring.grpc.server.port=0",
                        "--server.port=0",
                        "--pega.device.backend=host",
                        setting),
                Duration.ofSeconds(90));
        String log = child.logText();
        assertThat(child.process().exitValue()).as(log).isNotZero();
        List<String> errors = log.lines()
                .filter(l -> l.contains("ERROR") || l.contains("Exception"))
                .toList();
        assertThat(errors).as(log).hasSize(1);
        assertThat(errors.get(0))
                .contains("pega-server did not start: " + names)
                .contains(explains)
                .contains("Fix: ");
        assertThat(log).as("a stack trace").doesNotContain("\tat ").doesNotContain("APPLICATION FAILED TO START");
    }
}
