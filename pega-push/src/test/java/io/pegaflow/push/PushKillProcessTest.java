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
 * A server process SIGKILLed mid-push (not closed in-process: no shutdown hook, no goodbye, no -1 written by the dead
 * side). Both deadlines are ten minutes, past this test's timeout, so only the links can end these requests: the
 * surviving server learns of the death through its WatchReceive stream (the dead process's sockets close), and a
 * decode worker whose own server died learns it from its client's liveness check.
 */
@Timeout(120)
class PushKillProcessTest {
    private static final Duration LONG = Duration.ofMinutes(10);
    private static final Duration RPC = Duration.ofSeconds(10);
    private static final Duration VERDICT = Duration.ofSeconds(60);
    private static final List<Long> FROM = PushFixture.blocks(1, 2, 3, 8);
    private static final List<Long> TO = PushFixture.blocks(5, 6, 7, 12);

    private static PushConfig longDeadlines() {
        return PushConfig.defaults().withTimeouts(LONG, LONG);
    }

    @Test
    void shouldFailTheReceiveThroughTheLinkWhenThePrefillServerProcessIsKilled() throws Exception {
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
                    decodeClient.prepareReceive("decode-0", "sk-d", TO, List.of(loadState.name()), LONG);
            prefillClient.startPush("prefill-0", 0, "sk-p", prepared.getHandshake(), FROM, ready, pushState, LONG);
            PushFixture.writeLayer(prefill, 0, FROM, 3);
            ready.markReady(1);
            await().atMost(VERDICT)
                    .until(() -> PushFixture.layerMismatch(prefill, decode, 0, FROM, TO)
                            .isEmpty());

            prefillServer.sigkill();

            // the decode server's receive deadline is ten minutes away: the watch stream told it
            assertThat(decodeClient.awaitVerdict(loadState, VERDICT)).isEqualTo(PushClient.Verdict.FAILED);
            assertThat(decodeNode.engine.view().receiveFailures()).isEqualTo(1);
            assertThat(pushState.state()).isEqualTo(LoadStateShm.PENDING); // nobody is left to write it
        }
    }

    @Test
    void shouldFailThePushThroughTheLinkAndTellTheDecodeWorkerWhenTheDecodeServerProcessIsKilled() throws Exception {
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
                    decodeClient.prepareReceive("decode-0", "sd-d", TO, List.of(loadState.name()), LONG);
            prefillClient.startPush("prefill-0", 0, "sd-p", prepared.getHandshake(), FROM, ready, pushState, LONG);
            PushFixture.writeLayer(prefill, 0, FROM, 4);
            ready.markReady(1);
            await().atMost(VERDICT)
                    .until(() -> PushFixture.layerMismatch(prefill, decode, 0, FROM, TO)
                            .isEmpty());

            decodeServer.sigkill();

            // the prefill worker keeps computing; its server gives up without waiting for the push deadline
            assertThat(pushState.awaitTerminal(VERDICT)).isEqualTo(LoadStateShm.FAILURE);
            assertThat(prefillNode.engine.view().pushFailures()).isEqualTo(1);
            // the decode worker's load_state will never be written; its client sees the server is gone
            assertThat(decodeClient.awaitVerdict(loadState, VERDICT)).isEqualTo(PushClient.Verdict.SERVER_GONE);
            assertThat(loadState.state()).isEqualTo(LoadStateShm.PENDING);
        }
    }
}
