package io.pegaflow.metaserver.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.edge.access.AdmissionValve;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.Http;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Actuator mutations of the metaserver need the admin rule (decision 0016 §4): on a listener bound off loopback, a
 * POST without {@code pega.admin.token} is refused with the text that says how to enable it, a wrong token too, the
 * right one passes; reads stay open. The test's own connections come from 127.0.0.1, the case that looked local to the
 * rule before.
 */
@Tag("integration")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaserverAdminAccessTest {
    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final String LOGGER = "/actuator/loggers/io.pegaflow.metaserver";

    @TempDir
    Path dir;

    private static HttpResponse<String> post(MetaserverTestApp app, String path, String token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(app.httpBase() + path))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"configuredLevel\":\"DEBUG\"}"));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldRefuseActuatorMutationsWithoutTheTokenOnAListenerOffLoopback() throws Exception {
        try (MetaserverTestApp app = MetaserverTestApp.start(
                dir,
                new AdjustableClock(),
                "--server.address=0.0.0.0",
                "--management.endpoints.web.exposure.include=health,info,prometheus,loggers")) {
            HttpResponse<String> refused = post(app, LOGGER, null);
            assertThat(refused.statusCode()).isEqualTo(403);
            assertThat(refused.body()).isEqualTo(AdmissionValve.DENIED);
            assertThat(post(app, LOGGER, "guess").statusCode()).isEqualTo(403);
            assertThat(Http.get(app.httpBase() + LOGGER).body()).doesNotContain("\"configuredLevel\":\"DEBUG\"");
            assertThat(Http.get(app.httpBase() + "/api/nodes").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void shouldAdmitTheBearerToken() throws Exception {
        try (MetaserverTestApp app = MetaserverTestApp.start(
                dir,
                new AdjustableClock(),
                "--server.address=0.0.0.0",
                "--pega.admin.token=meta-s3cret",
                "--management.endpoints.web.exposure.include=health,info,prometheus,loggers")) {
            assertThat(post(app, LOGGER, null).statusCode()).isEqualTo(403);
            assertThat(post(app, LOGGER, "meta-s3cret").statusCode()).isEqualTo(204);
            assertThat(Http.get(app.httpBase() + LOGGER).body()).contains("\"configuredLevel\":\"DEBUG\"");
        }
    }
}
