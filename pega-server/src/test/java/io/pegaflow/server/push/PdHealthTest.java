package io.pegaflow.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.PushClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.test.annotation.DirtiesContext;

/**
 * Health tells the truth about the push's request slots (decision 0031 §4, the probe's HL-01): while this process's
 * user holds its whole share of them (one of two), {@code /health} says {@code degraded: pd: ...} naming the share,
 * and the {@code pd} component is DEGRADED; when the receive ends, both are back to ok.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=32MB",
            "pega.device.backend=host",
            "pega.pd.enabled=true",
            "pega.pd.transports=tcp",
            "pega.pd.max-requests=2",
            "pega.pd.max-requests-per-principal=1"
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PdHealthTest {
    @Autowired
    GrpcPort port;

    @Autowired
    PdHealthIndicator indicator;

    @Autowired
    Environment env;

    private String health() throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(
                                        "http://127.0.0.1:" + env.getProperty("local.server.port") + "/health"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    @Test
    void shouldSayDegradedWhileAPrincipalHoldsItsWholeShare() throws Exception {
        try (MockVllmWorker w = MockVllmWorker.builder("127.0.0.1", port.port())
                        .instanceId("held")
                        .sharedLayers(List.of("l0"), KvLayout.kvFirst(8, 16, 2, 64, 2))
                        .build();
                PushClient client = PushClient.connect("127.0.0.1", port.port(), Duration.ofSeconds(10));
                LoadStateShm loadState = LoadStateShm.create()) {
            assertThat(client.registerLayers(w)).isEqualTo(1);
            assertThat(health()).isEqualTo("ok");
            PrepareReceiveResponse r = client.prepareReceive(
                    "held", "req", List.of(1L), List.of(loadState.name()), Duration.ofSeconds(60));
            assertThat(health())
                    .startsWith("degraded: pd: 1 principal holds its whole share")
                    .contains("pega.pd.max-requests-per-principal");
            assertThat(indicator.health().getStatus().getCode()).isEqualTo("DEGRADED");

            client.cancelReceive(r.getReceiveId());
            assertThat(loadState.awaitTerminal(Duration.ofSeconds(10))).isEqualTo(LoadStateShm.FAILURE);
            await().atMost(Duration.ofSeconds(10)).until(() -> health().equals("ok"));
            assertThat(indicator.health().getStatus().getCode()).isEqualTo("UP");
        }
    }
}
