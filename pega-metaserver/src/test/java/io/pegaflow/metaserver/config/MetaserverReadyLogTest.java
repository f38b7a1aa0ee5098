package io.pegaflow.metaserver.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** A started metaserver says so in one line naming where it listens, its store and epoch; Flyway stays quiet. */
@ExtendWith(OutputCaptureExtension.class)
@Timeout(120)
class MetaserverReadyLogTest {

    @Test
    void shouldLogOneReadyLineAndNoFlywayVersionWarning(@TempDir Path dir, CapturedOutput output) {
        try (MetaserverTestApp app = MetaserverTestApp.start(dir, new AdjustableClock())) {
            assertThat(output.getAll().lines().filter(l -> l.contains("pega-metaserver ready:")))
                    .singleElement()
                    .satisfies(line -> assertThat(line)
                            .contains("gRPC 127.0.0.1:" + app.grpcPort())
                            .contains("HTTP 127.0.0.1:")
                            .contains("node store jdbc:h2:file:")
                            .doesNotContain("DB_CLOSE_ON_EXIT")
                            .containsPattern("epoch \\d+$"));
            assertThat(output.getAll())
                    .contains("Successfully validated")
                    .doesNotContain("newer than the version Flyway has been verified with");
        }
    }

    @Test
    void shouldWriteTheListeningAddressAsHostAndPort() {
        assertThat(MetaserverReadyLog.listening("[/127.0.0.1:50056]", 50056)).isEqualTo("127.0.0.1:50056");
        assertThat(MetaserverReadyLog.listening("0.0.0.0", 50056)).isEqualTo("0.0.0.0:50056");
    }

    @Test
    void shouldNameTheStoreWithoutItsParameters() {
        assertThat(MetaserverReadyLog.store("jdbc:postgresql://db:5432/meta?user=pega&password=secret"))
                .isEqualTo("jdbc:postgresql://db:5432/meta");
        assertThat(MetaserverReadyLog.store("jdbc:h2:file:./data/metaserver;DB_CLOSE_ON_EXIT=FALSE"))
                .isEqualTo("jdbc:h2:file:./data/metaserver");
    }
}
