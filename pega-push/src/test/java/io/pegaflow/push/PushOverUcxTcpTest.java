package io.pegaflow.push;

import static io.pegaflow.push.PushFixture.LAYERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.push.view.PushView;
import io.pegaflow.testkit.LayerReadyShm;
import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.MockVllmWorker;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The push contract over UCX's TCP transport (two nodes as CI can emulate them), and every failure: each ends in a
 * signalled verdict on both workers' shm objects within its deadline, never a hang.
 */
class PushOverUcxTcpTest extends PushContract {
    private static final List<Long> FROM = PushFixture.blocks(1, 2, 3, 8);
    private static final List<Long> TO = PushFixture.blocks(5, 6, 7, 12);
    private static final Duration VERDICT = Duration.ofSeconds(30);

    @Override
    String transports() {
        return "tcp";
    }

    @Override
    PushConfig config() {
        // short deadlines, so a lost notice is covered by the other side's deadline within the test's patience
        return PushConfig.defaults().withTimeouts(Duration.ofSeconds(6), Duration.ofSeconds(6));
    }

    @Test
    void shouldFailBothSidesWhenThePrefillServerIsKilledMidPush() throws Exception {
        try (LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", "kp-d", TO, List.of(loadState.name()), RPC);
            prefillClient.startPush("prefill-0", 0, "kp-p", prepared.getHandshake(), FROM, ready, pushState, RPC);
            PushFixture.writeLayer(prefill, 0, FROM, 3);
            ready.markReady(1);
            awaitLayer(0);
            prefillNode.kill(); // the prefill worker's forward pass stops with it
            assertThat(loadState.awaitTerminal(VERDICT)).isEqualTo(LoadStateShm.FAILURE);
            assertThat(pushState.awaitTerminal(VERDICT)).isEqualTo(LoadStateShm.FAILURE);
            assertThat(decodeNode.engine.view().receiveFailures()).isEqualTo(1);
        }
    }

    @Test
    void shouldFailBothSidesWhenTheDecodeServerIsKilledMidPush() throws Exception {
        try (LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", "kd-d", TO, List.of(loadState.name()), RPC);
            prefillClient.startPush("prefill-0", 0, "kd-p", prepared.getHandshake(), FROM, ready, pushState, RPC);
            PushFixture.writeLayer(prefill, 0, FROM, 4);
            ready.markReady(1);
            awaitLayer(0);
            decodeNode.kill();
            for (int l = 1; l < LAYERS; l++) {
                PushFixture.writeLayer(prefill, l, FROM, 4);
                ready.markReady(l + 1);
            }
            assertThat(pushState.awaitTerminal(VERDICT)).isEqualTo(LoadStateShm.FAILURE);
            assertThat(loadState.awaitTerminal(VERDICT)).isEqualTo(LoadStateShm.FAILURE);
            assertThat(prefillNode.engine.view().pushFailures()).isEqualTo(1);
        }
    }

    @Test
    void shouldFailTheReceiveWhenNoPrefillEverPushes() {
        try (LoadStateShm loadState = LoadStateShm.create()) {
            decodeClient.prepareReceive("decode-0", "to-d", TO, List.of(loadState.name()), Duration.ofMillis(500));
            assertThat(loadState.awaitTerminal(VERDICT)).isEqualTo(LoadStateShm.FAILURE);
            assertThat(decodeNode.engine.view().receiveFailures()).isEqualTo(1);
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> !decodeNode.engine.view().recentReceives().isEmpty());
            PushView.ReceiveTimeline t =
                    decodeNode.engine.view().recentReceives().get(0);
            assertThat(t.succeeded()).isFalse();
            assertThat(t.layerOnDeviceNanos()).hasSize(LAYERS).containsOnly(0L);
        }
    }

    @Test
    void shouldFailBothSidesWhenThePrefillWorkerStopsMarkingLayers() {
        try (LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", "st-d", TO, List.of(loadState.name()), RPC);
            prefillClient.startPush(
                    "prefill-0", 0, "st-p", prepared.getHandshake(), FROM, ready, pushState, Duration.ofMillis(800));
            PushFixture.writeLayer(prefill, 0, FROM, 5);
            ready.markReady(1); // ... and then the worker hangs
            assertThat(pushState.awaitTerminal(VERDICT)).isEqualTo(LoadStateShm.FAILURE);
            assertThat(loadState.awaitTerminal(VERDICT)).isEqualTo(LoadStateShm.FAILURE);
        }
    }

    @Test
    void shouldFailBothSidesAtOnceWhenThePrefillWorkerAborts() {
        try (LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", "ab-d", TO, List.of(loadState.name()), RPC);
            prefillClient.startPush("prefill-0", 0, "ab-p", prepared.getHandshake(), FROM, ready, pushState, RPC);
            ready.abort();
            assertThat(pushState.awaitTerminal(Duration.ofSeconds(3))).isEqualTo(LoadStateShm.FAILURE);
            assertThat(loadState.awaitTerminal(Duration.ofSeconds(3))).isEqualTo(LoadStateShm.FAILURE);
        }
    }

    @Test
    void shouldRefuseUnequalTpSizes() {
        try (MockVllmWorker tp2 = PushFixture.worker("prefill-tp2", 0, 2, prefillNode.port());
                LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            prefillClient.registerLayers(tp2);
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", "tp-d", TO, List.of(loadState.name()), RPC);
            assertThatThrownBy(() -> prefillClient.startPush(
                            "prefill-tp2", 0, "tp-p", prepared.getHandshake(), FROM, ready, pushState, RPC))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                        assertThat(e.getStatus().getDescription())
                                .contains("unequal TP sizes: prefill tp_size=2, decode tp_size=1");
                    });
            decodeClient.cancelReceive(prepared.getReceiveId());
            assertThat(loadState.awaitTerminal(VERDICT)).isEqualTo(LoadStateShm.FAILURE);
        }
    }

    @Test
    void shouldRefuseAHandshakeThatIsNotOne() {
        try (LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            assertThatThrownBy(() -> prefillClient.startPush(
                            "prefill-0",
                            0,
                            "bad",
                            com.google.protobuf.ByteString.copyFromUtf8("not a handshake"),
                            FROM,
                            ready,
                            pushState,
                            RPC))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
        }
    }

    private void awaitLayer(int l) {
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() ->
                        PushFixture.layerMismatch(prefill, decode, l, FROM, TO).isEmpty());
    }
}
