package io.pegaflow.server.startup;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.server.PegaServerApplication;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.ClassPathResource;

/** The profiles ship inside the application, and the ready summary names the profile, its files and the pool. */
@Timeout(120)
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
                    .contains("admin       mutations from loopback only");
        }
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
