package io.pegaflow.server.conformance;

import static io.pegaflow.server.conformance.ForeignProcess.call;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.proto.ext.push.CancelReceiveRequest;
import io.pegaflow.proto.ext.push.LayerArrivedRequest;
import io.pegaflow.proto.ext.push.PrepareReceiveRequest;
import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.proto.ext.push.PushFailedRequest;
import io.pegaflow.proto.ext.push.PushLayer;
import io.pegaflow.proto.ext.push.RegisterPushLayersRequest;
import io.pegaflow.proto.ext.push.StartPushRequest;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LayerReadyShm;
import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.PushClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.test.context.TestPropertySource;

/**
 * The P/D push between two OS users (the probe's PD-01 to PD-05): the victim (this JVM's user) registers a prefill and
 * a decode instance's push layers and prepares a receive; a process of another uid ({@link ForeignProcess}) names the
 * victim's instances in StartPush, PrepareReceive, RegisterPushLayers and CancelReceive (PERMISSION_DENIED), and
 * presents the receive's id without its secret in LayerArrived and PushFailed (refused as an unknown receive). The
 * victim's receive stays pending, its push then lands byte for byte, and {@code /pd} never shows the receive's id.
 */
@Timeout(180)
@TestPropertySource(properties = {"pega.pd.enabled=true", "pega.pd.transports=tcp"})
class PdPushTenantsTest extends ConformanceSupport {
    private static final KvLayout LAYOUT = KvLayout.kvFirst(16, 16, 2, 64, 2);
    private static final List<String> LAYERS = List.of("l0", "l1");
    private static final String DENIED = "PERMISSION_DENIED instance %s is registered by another user";

    private MockVllmWorker pushWorker(String instanceId) {
        return MockVllmWorker.builder(HOST, port())
                .instanceId(instanceId)
                .sharedLayers(LAYERS, LAYOUT)
                .build();
    }

    @Test
    void shouldKeepAnotherUserOffTheVictimsPushAndReceive() throws Exception {
        List<Long> blocks = List.of(1L, 2L, 3L);
        List<Integer> ids = List.of(1, 2, 3);
        try (MockVllmWorker prefill = pushWorker("victim-pf");
                MockVllmWorker decode = pushWorker("victim-dc");
                PushClient client = PushClient.connect(HOST, port(), WAIT);
                LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS.size())) {
            assertThat(client.registerLayers(prefill)).isEqualTo(2);
            assertThat(client.registerLayers(decode)).isEqualTo(2);
            PrepareReceiveResponse prepared =
                    client.prepareReceive("victim-dc", "victim-req", blocks, List.of(loadState.name()), WAIT);
            long receiveId = prepared.getReceiveId();

            List<String> calls = new ArrayList<>(List.of(
                    call(
                            "pd-start",
                            StartPushRequest.newBuilder()
                                    .setInstanceId("victim-pf")
                                    .setRequestId("steal")
                                    .setHandshake(prepared.getHandshake())
                                    .addAllBlockIds(blocks)
                                    .setLayerReadyShm("pega_foreign_ready")
                                    .setPushStateShm("pega_foreign_state")
                                    .build()),
                    call(
                            "pd-prepare",
                            PrepareReceiveRequest.newBuilder()
                                    .setInstanceId("victim-dc")
                                    .setRequestId("inject")
                                    .addAllBlockIds(blocks)
                                    .addLoadStateShm("pega_foreign_state")
                                    .build()),
                    call(
                            "pd-register",
                            RegisterPushLayersRequest.newBuilder()
                                    .setInstanceId("victim-dc")
                                    .setTpSize(1)
                                    .addLayers(PushLayer.newBuilder()
                                            .setName("l0")
                                            .setWrapperBytes(ByteString.copyFromUtf8("not even a descriptor")))
                                    .build()),
                    call(
                            "pd-cancel",
                            CancelReceiveRequest.newBuilder()
                                    .setReceiveId(receiveId)
                                    .build())));
            for (int l = 0; l < LAYERS.size(); l++) {
                calls.add(call(
                        "pd-arrived",
                        LayerArrivedRequest.newBuilder()
                                .setReceiveId(receiveId)
                                .setLayer(l)
                                .build()));
            }
            calls.add(call(
                    "pd-failed",
                    PushFailedRequest.newBuilder()
                            .setReceiveId(receiveId)
                            .setReason("forged")
                            .build()));

            try (ForeignProcess intruder = ForeignProcess.run(HOST, port(), calls.toArray(String[]::new))) {
                assertThat(intruder.result(0)).startsWith(String.format(DENIED, "victim-pf"));
                assertThat(intruder.result(1)).startsWith(String.format(DENIED, "victim-dc"));
                assertThat(intruder.result(2)).startsWith(String.format(DENIED, "victim-dc"));
                assertThat(intruder.result(3))
                        .startsWith("PERMISSION_DENIED receive " + Long.toUnsignedString(receiveId)
                                + " was prepared by another user");
                String unknown = "FAILED_PRECONDITION receive " + Long.toUnsignedString(receiveId) + " is not open";
                for (int i = 4; i < 4 + LAYERS.size() + 1; i++) {
                    assertThat(intruder.result(i))
                            .as("call %d of %s", i, intruder.output())
                            .startsWith(unknown);
                }
            }
            assertThat(loadState.state())
                    .as("the victim's receive is untouched")
                    .isEqualTo(LoadStateShm.PENDING);

            HttpResponse<String> view = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort() + "/pd"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(view.statusCode()).isEqualTo(200);
            assertThat(view.body()).contains("victim-req").doesNotContain(Long.toUnsignedString(receiveId));

            prefill.fillBlocks(ids, BlockPattern.perByte(5));
            ready.markReady(LAYERS.size());
            client.startPush("victim-pf", 0, "victim-p", prepared.getHandshake(), blocks, ready, pushState, WAIT);
            assertThat(loadState.awaitTerminal(WAIT)).isEqualTo(LoadStateShm.SUCCESS);
            assertThat(pushState.awaitTerminal(WAIT)).isEqualTo(LoadStateShm.SUCCESS);
            decode.verifyBlocks(ids, BlockPattern.perByte(5));
        }
    }
}
