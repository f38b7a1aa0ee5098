package io.pegaflow.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pegaflow.testkit.SessionHandle;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * A worker that exits normally has unregistered before its Session ends; the line that records the end reads as the
 * normal case it is, not as an error ("instance was not registered").
 */
@Timeout(60)
@ExtendWith(OutputCaptureExtension.class)
class SessionEndLogTest extends ServerTestBase {

    @Test
    void shouldRecordTheEndOfASessionWithNothingLeftAsTheNormalCase(CapturedOutput output) {
        try (SessionHandle session = scheduler.openSession("session-end-worker", "ns", 1, 1)) {
            assertThat(session.awaitHeaders(Duration.ofSeconds(10))).isTrue();
        }
        await().atMost(Duration.ofSeconds(10))
                .until(() -> output.getAll().contains("session of session-end-worker ended"));

        assertThat(output.getAll().lines().filter(l -> l.contains("session of session-end-worker")))
                .singleElement()
                .satisfies(line -> assertThat(line)
                        .contains(" INFO ")
                        .contains("ended; nothing to remove (its instance had unregistered, or never registered)")
                        .doesNotContain("not registered"));
    }
}
