package io.pegaflow.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.PushClient;
import java.time.Duration;
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
    private static final Duration VERDICT = Duration.ofSeconds(90);

    @Test
    void shouldFailTheReceiveThroughKeepaliveWhenThePrefillServerGoesSilent() throws Exception {
        try (PushServerProcess prefillServer = new PushServerProcess(MidPush.DEADLINE);
                PushNode decodeNode = PushNode.start("tcp", MidPush.longDeadlines());
                MidPush push = new MidPush(prefillServer.port(), decodeNode.port(), "hp", 5)) {
            prefillServer.sigstop();

            long t0 = System.nanoTime();
            assertThat(push.decodeClient.awaitVerdict(push.loadState, VERDICT)).isEqualTo(PushClient.Verdict.FAILED);
            System.out.printf(
                    "prefill server stopped: the decode receive failed after %.1f s%n", (System.nanoTime() - t0) / 1e9);
            assertThat(decodeNode.engine.view().receiveFailures()).isEqualTo(1);
        }
    }

    @Test
    void shouldFailThePushAndTellTheDecodeWorkerThroughKeepaliveWhenTheDecodeServerGoesSilent() throws Exception {
        try (PushNode prefillNode = PushNode.start("tcp", MidPush.longDeadlines());
                PushServerProcess decodeServer = new PushServerProcess(MidPush.DEADLINE);
                MidPush push = new MidPush(prefillNode.port(), decodeServer.port(), "hd", 6)) {
            decodeServer.sigstop();

            long t0 = System.nanoTime();
            assertThat(push.pushState.awaitTerminal(VERDICT)).isEqualTo(LoadStateShm.FAILURE);
            System.out.printf("decode server stopped: the push failed after %.1f s%n", (System.nanoTime() - t0) / 1e9);
            assertThat(prefillNode.engine.view().pushFailures()).isEqualTo(1);
            assertThat(push.decodeClient.awaitVerdict(push.loadState, VERDICT))
                    .isEqualTo(PushClient.Verdict.SERVER_GONE);
            System.out.printf(
                    "decode server stopped: its worker saw it gone after %.1f s%n", (System.nanoTime() - t0) / 1e9);
        }
    }
}
