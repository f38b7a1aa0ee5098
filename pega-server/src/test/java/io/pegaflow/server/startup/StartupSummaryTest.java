package io.pegaflow.server.startup;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.server.PegaServerApplication;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.ClassPathResource;

/** The profiles ship inside the application, and the ready summary names the profile, its files and the pool. */
@Timeout(120)
@ExtendWith(OutputCaptureExtension.class)
class StartupSummaryTest {

    @Test
    void shouldSummariseADevProfileStartLoadedFromTheClasspath() {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(PegaServerApplication.class)
                .run(
                        "--spring.profiles.active=dev",
                        "--spring.grpc.server.port=0",
                        "--server.port=0",
                        "--logging.level.root=WARN")) {
            String summary =
                    String.join("\n", context.getBean(StartupSummary.class).lines());
            assertThat(summary)
                    .contains("profile     dev")
                    .containsPattern("config .*class path resource \\[application-dev.yml\\]")
                    .contains("pool        256.0 MiB in 1 shard(s)")
                    .contains("backend     host")
                    .contains("ssd         off")
                    .contains("admin       mutations from loopback on the gRPC listener, disabled elsewhere");
        }
    }

    @Test
    void shouldLogTheStopAfterTheEngineUnmappedThePool(CapturedOutput output) {
        new SpringApplicationBuilder(PegaServerApplication.class)
                .run(
                        "--pega.pool.size=16MB",
                        "--pega.device.backend=host",
                        "--spring.grpc.server.port=0",
                        "--server.port=0",
                        "--logging.level.root=WARN",
                        "--logging.level.io.pegaflow.server.startup=INFO")
                .close();
        String log = output.getAll();
        int stopping = log.indexOf("pega-server stopping:");
        int stopped = log.indexOf("pega-server stopped: engine closed");
        assertThat(stopping).as(log).isNotNegative();
        assertThat(stopped).as("the last line, after the engine closed").isGreaterThan(stopping);
        assertThat(log.substring(stopped)).contains("pool of 16.0 MiB unmapped");
    }

    @Test
    void shouldShipTheSameProfilesAsTheExamplesInConfig() throws IOException {
        for (String profile : new String[] {"application-dev.yml", "application-production.yml"}) {
            String shipped =
                    new String(new ClassPathResource(profile).getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(Files.readString(Path.of("..", "config", profile)))
                    .as("config/%s against the one inside the jar", profile)
                    .isEqualTo(shipped);
        }
    }
}
