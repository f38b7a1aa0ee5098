package io.pegaflow.metaserver.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.metaserver.MetaserverApplication;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** A metaserver start that fails on a setting: the one line the process prints, naming the key. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaserverStartupFailureTest {

    @TempDir
    Path dir;

    private String failureLine(String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "--pega.metaserver.addr=127.0.0.1:0",
                "--pega.metaserver.db-path=" + dir.resolve("metaserver").toAbsolutePath(),
                "--logging.level.root=WARN"));
        args.addAll(List.of(extra));
        Throwable[] failure = new Throwable[1];
        assertThatThrownBy(() -> MetaserverApplication.builder()
                        .run(args.toArray(String[]::new))
                        .close())
                .satisfies(e -> failure[0] = e);
        FailureAnalysis analysis = new MetaserverFailureAnalyzer().analyze(failure[0]);
        assertThat(analysis).as("analysis of %s", failure[0]).isNotNull();
        return OneLineFailureReporter.line(analysis);
    }

    @Test
    void shouldRefuseAnUnknownKeyAndSuggestTheKnownOne() {
        assertThat(failureLine("--pega.metaserver.http-addr=127.0.0.1:0", "--pega.metaserver.ttl-minuts=60"))
                .startsWith("pega.metaserver.ttl-minuts: 60")
                .contains("did you mean pega.metaserver.ttl-minutes?")
                .contains("Fix: correct or remove it")
                .doesNotContain("\n");
    }

    @Test
    void shouldReportARefusedValueOnOneLine() {
        assertThat(failureLine("--pega.metaserver.http-addr=9092"))
                .isEqualTo("pega.metaserver.http-addr: 9092 (expected: host:port, e.g. 0.0.0.0:9092). Fix: correct"
                        + " that setting (every key is described in docs/metaserver.md)");
        assertThat(failureLine("--pega.metaserver.http-addr=127.0.0.1:0", "--pega.metaserver.ttl-minutes=0"))
                .startsWith("pega.metaserver.ttl-minutes: 0 (expected: > 0)");
        assertThat(failureLine(
                        "--pega.metaserver.http-addr=127.0.0.1:0", "--pega.metaserver.calls.max-queue-wait-ms=0"))
                .startsWith("pega.metaserver.calls.max-queue-wait-ms: 0 (expected: > 0)")
                .doesNotContain("\n");
    }

    @Test
    void shouldSuggestOnlyCloseKeys() {
        assertThat(MetaserverFailureAnalyzer.suggest("pega.metaserver.db-pth")).isEqualTo("pega.metaserver.db-path");
        assertThat(MetaserverFailureAnalyzer.suggest("pega.metaserver.something-else"))
                .isNull();
    }
}
