package io.pegaflow.push;

import static io.pegaflow.push.PushFixture.LAYERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.testkit.LayerReadyShm;
import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.PushClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server whose host vanishes without closing its sockets (power loss, a cut cable), played by a child server process
 * stopped with SIGSTOP mid-push: nothing closes, nothing answers. Both deadlines are ten minutes, so only keepalive
 * can end these requests within the test: the prefill server's link pings the decode server while it watches the
 * receive (10 s, 5 s to answer), the decode server pings a silent connection (30 s, 10 s to answer), and the decode
 * worker's client pings its own server (10 s, 5 s).
 */
@Timeout(180)
class PushHostLossTest {
    private static final Duration LONG = Duration.ofMinutes(10);
    private static final Duration RPC = Duration.ofSeconds(10);
    private static final Duration VERDICT = Duration.ofSeconds(90);
    private static final List<Long> FROM = PushFixture.blocks(1, 2, 3, 8);
    private static final List<Long> TO = PushFixture.blocks(5, 6, 7, 12);

    private static PushConfig longDeadlines() {
        return PushConfig.defaults().withTimeouts(LONG, LONG);
    }

    @Test
    void shouldFailTheReceiveThroughKeepaliveWhenThePrefillServerGoesSilent() throws Exception {
        try (PushServerProcess prefillServer = new PushServerProcess(LONG);
                PushNode decodeNode = PushNode.start("tcp", longDeadlines());
                MockVllmWorker prefill = PushFixture.worker("prefill-0", 0, 1, prefillServer.port());
                MockVllmWorker decode = PushFixture.worker("decode-0", 0, 1, decodeNode.port());
                PushClient prefillClient = PushClient.connect("127.0.0.1", prefillServer.port(), RPC);
                PushClient decodeClient = PushClient.connect("127.0.0.1", decodeNode.port(), RPC);
                LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            prefillClient.registerLayers(prefill);
            decodeClient.registerLayers(decode);
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", "hp-d", TO, List.of(loadState.name()), LONG);
            prefillClient.startPush("prefill-0", 0, "hp-p", prepared.getHandshake(), FROM, ready, pushState, LONG);
            PushFixture.writeLayer(prefill, 0, FROM, 5);
            ready.markReady(1);
            await().atMost(VERDICT)
                    .until(() -> PushFixture.layerMismatch(prefill, decode, 0, FROM, TO)
                            .isEmpty());

            prefillServer.sigstop();

            long t0 = System.nanoTime();
            assertThat(decodeClient.awaitVerdict(loadState, VERDICT)).isEqualTo(PushClient.Verdict.FAILED);
            System.out.printf(
                    "prefill server stopped: the decode receive failed after %.1f s%n", (System.nanoTime() - t0) / 1e9);
            assertThat(decodeNode.engine.view().receiveFailures()).isEqualTo(1);
        }
    }

    @Test
    void shouldFailThePushAndTellTheDecodeWorkerThroughKeepaliveWhenTheDecodeServerGoesSilent() throws Exception {
        try (PushNode prefillNode = PushNode.start("tcp", longDeadlines());
                PushServerProcess decodeServer = new PushServerProcess(LONG);
                MockVllmWorker prefill = PushFixture.worker("prefill-0", 0, 1, prefillNode.port());
                MockVllmWorker decode = PushFixture.worker("decode-0", 0, 1, decodeServer.port());
                PushClient prefillClient = PushClient.connect("127.0.0.1", prefillNode.port(), RPC);
                PushClient decodeClient = PushClient.connect("127.0.0.1", decodeServer.port(), RPC);
                LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            prefillClient.registerLayers(prefill);
            decodeClient.registerLayers(decode);
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", "hd-d", TO, List.of(loadState.name()), LONG);
            prefillClient.startPush("prefill-0", 0, "hd-p", prepared.getHandshake(), FROM, ready, pushState, LONG);
            PushFixture.writeLayer(prefill, 0, FROM, 6);
            ready.markReady(1);
            await().atMost(VERDICT)
                    .until(() -> PushFixture.layerMismatch(prefill, decode, 0, FROM, TO)
                            .isEmpty());

            decodeServer.sigstop();

            long t0 = System.nanoTime();
            assertThat(pushState.awaitTerminal(VERDICT)).isEqualTo(LoadStateShm.FAILURE);
            System.out.printf("decode server stopped: the push failed after %.1f s%n", (System.nanoTime() - t0) / 1e9);
            assertThat(prefillNode.engine.view().pushFailures()).isEqualTo(1);
            assertThat(decodeClient.awaitVerdict(loadState, VERDICT)).isEqualTo(PushClient.Verdict.SERVER_GONE);
            System.out.printf(
                    "decode server stopped: its worker saw it gone after %.1f s%n", (System.nanoTime() - t0) / 1e9);
        }
    }
}
