package io.pegaflow.server.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;

/**
 * The {@code production} profile exposes {@code /actuator/loggers}, so a level can be changed at runtime the one way
 * docs/operations.md shows: a POST with the admin token. Without the token the same POST is refused (the listener binds
 * 0.0.0.0), and reading the levels needs nothing. The host backend and a small pool stand in for the GPU node.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "pega.pool.size=16MB",
            "pega.pool.headroom=0",
            "pega.device.backend=host",
            "pega.admin.token=" + ProductionProfileLoggersTest.TOKEN
        })
@ActiveProfiles("production")
@Timeout(120)
class ProductionProfileLoggersTest {
    static final String TOKEN = "production-profile-loggers-test";
    private static final String LOGGER = "/actuator/loggers/io.pegaflow.server.grpc";
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Value("${local.server.port}")
    int port;

    private HttpResponse<String> send(String path, @Nullable String level, @Nullable String token)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (level != null) {
            b.header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"configuredLevel\":\"" + level + "\"}"));
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldChangeALevelAtRuntimeWithTheTokenAndOnlyWithIt() throws Exception {
        assertThat(send("/actuator/loggers", null, null).statusCode())
                .as("reading the levels")
                .isEqualTo(200);

        assertThat(send(LOGGER, "DEBUG", null).statusCode())
                .as("without the token")
                .isEqualTo(403);
        assertThat(send(LOGGER, "DEBUG", "wrong-" + TOKEN).statusCode())
                .as("a wrong token")
                .isEqualTo(403);
        assertThat(send(LOGGER, null, null).body()).doesNotContain("\"configuredLevel\":\"DEBUG\"");

        assertThat(send(LOGGER, "DEBUG", TOKEN).statusCode()).isEqualTo(204);
        assertThat(send(LOGGER, null, null).body()).contains("\"configuredLevel\":\"DEBUG\"");

        assertThat(send(LOGGER, "INFO", TOKEN).statusCode()).isEqualTo(204);
        assertThat(send(LOGGER, null, null).body()).contains("\"configuredLevel\":\"INFO\"");
    }
}
