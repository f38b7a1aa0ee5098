package io.pegaflow.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.MeterRegistry;
import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.proto.ext.push.PushHandshake;
import io.pegaflow.push.PushEngine;
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
 * {@code pega.pd.enabled=true} wires the push engine beside the cache engine and serves {@code pegaflow.ext.PdPush}
 * on the server's gRPC port: a worker registers its layers, prepares a receive whose handshake names this server, and
 * a cancel ends in load_state -1.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=32MB",
            "pega.device.backend=host",
            "pega.pd.enabled=true",
            "pega.pd.transports=tcp"
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PdPushWiringTest {
    @Autowired
    GrpcPort port;

    @Autowired
    PushEngine push;

    @Autowired
    MeterRegistry registry;

    @Autowired
    Environment env;

    @Test
    void shouldServePdPushOnTheServersGrpcPort() throws Exception {
        try (MockVllmWorker w = MockVllmWorker.builder("127.0.0.1", port.port())
                        .instanceId("wired")
                        .sharedLayers(List.of("l0", "l1"), KvLayout.kvFirst(8, 16, 2, 64, 2))
                        .build();
                PushClient client = PushClient.connect("127.0.0.1", port.port(), Duration.ofSeconds(10));
                LoadStateShm loadState = LoadStateShm.create()) {
            assertThat(client.registerLayers(w)).isEqualTo(2);
            PrepareReceiveResponse r = client.prepareReceive(
                    "wired", "req", List.of(1L, 2L), List.of(loadState.name()), Duration.ofSeconds(30));
            PushHandshake h = PushHandshake.parseFrom(r.getHandshake());
            assertThat(h.getDecodeAddress()).isEqualTo("127.0.0.1:" + port.port());
            assertThat(h.getRanksCount()).isEqualTo(1);
            assertThat(push.view().receivesInFlight()).isEqualTo(1);
            HttpResponse<String> view = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create(
                                            "http://127.0.0.1:" + env.getProperty("local.server.port") + "/pd"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(view.statusCode()).isEqualTo(200);
            assertThat(view.body()).contains("\"receivesInFlight\":1").contains("\"requestId\":\"req\"");
            assertThat(registry.get("pegaflow_pd_receives_in_flight").gauge().value())
                    .isEqualTo(1.0);
            client.cancelReceive(r.getReceiveId());
            assertThat(loadState.awaitTerminal(Duration.ofSeconds(10))).isEqualTo(LoadStateShm.FAILURE);
            assertThat(registry.get("pegaflow_pd_receive_failures")
                            .functionCounter()
                            .count())
                    .isEqualTo(1.0);
            // PdPush calls pass the edge like the engine's: counted with the status the client got, mapped there
            assertThatThrownBy(() -> client.cancelReceive(r.getReceiveId()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                        assertThat(e.getStatus().getDescription()).startsWith("receive ");
                    });
            assertThat(pdCalls("register_push_layers", "ok")).isEqualTo(1.0);
            assertThat(pdCalls("prepare_receive", "ok")).isEqualTo(1.0);
            assertThat(pdCalls("cancel_receive", "ok")).isEqualTo(1.0);
            assertThat(pdCalls("cancel_receive", "FAILED_PRECONDITION")).isEqualTo(1.0);
            assertThat(registry.find("pegaflow_rpc_requests")
                            .tag("method", "cancel_receive")
                            .counters())
                    .as("the engine's RPC family counts only pegaflow.Engine")
                    .isEmpty();
        }
    }

    private double pdCalls(String method, String status) {
        return registry.get("pegaflow_pd_rpc_requests")
                .tag("method", method)
                .tag("status", status)
                .counter()
                .count();
    }
}
