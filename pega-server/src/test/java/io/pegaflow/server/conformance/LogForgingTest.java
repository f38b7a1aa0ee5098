package io.pegaflow.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pegaflow.testkit.SessionHandle;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * D17 / OF-06 through the real server and its real log configuration: a Session whose {@code instance_id} carries a
 * line break and a log line of its own. The engine's "session of ... ended" line stays one line, the forged text
 * visibly inside it.
 */
@Timeout(60)
@ExtendWith(OutputCaptureExtension.class)
class LogForgingTest extends ServerTestBase {
    private static final String FORGED_LINE = "2026-12-06T00:00:00.000Z  WARN 1 --- [main] io.pegaflow.FAKE : FORGED";

    @Test
    void shouldKeepAForgedSessionInstanceIdOnOneLogLine(CapturedOutput output) {
        String id = "forger\n" + FORGED_LINE;
        try (SessionHandle session = scheduler.openSession(id, "ns\r\u0000", 1, 1)) {
            assertThat(session.awaitHeaders(Duration.ofSeconds(10))).isTrue();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> output.getAll().contains("session of forger"));

        List<String> forged =
                output.getAll().lines().filter(l -> l.contains("FORGED")).toList();
        assertThat(forged)
                .isNotEmpty()
                .allSatisfy(line -> assertThat(line)
                        .doesNotStartWith("2026-12-06T00:00:00.000Z")
                        .contains("forger\\n2026-12-06T00:00:00.000Z"));
    }
}
