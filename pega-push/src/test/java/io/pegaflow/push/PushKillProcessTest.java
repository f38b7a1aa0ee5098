package io.pegaflow.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.PushClient;
import java.time.Duration;
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
    private static final Duration VERDICT = Duration.ofSeconds(60);

    @Test
    void shouldFailTheReceiveThroughTheLinkWhenThePrefillServerProcessIsKilled() throws Exception {
        try (PushServerProcess prefillServer = new PushServerProcess(MidPush.DEADLINE);
                PushNode decodeNode = PushNode.start("tcp", MidPush.longDeadlines());
                MidPush push = new MidPush(prefillServer.port(), decodeNode.port(), "sk", 3)) {
            prefillServer.sigkill();

            // the decode server's receive deadline is ten minutes away: the watch stream told it
            assertThat(push.decodeClient.awaitVerdict(push.loadState, VERDICT)).isEqualTo(PushClient.Verdict.FAILED);
            assertThat(decodeNode.engine.view().receiveFailures()).isEqualTo(1);
            assertThat(push.pushState.state()).isEqualTo(LoadStateShm.PENDING); // nobody is left to write it
        }
    }

    @Test
    void shouldFailThePushThroughTheLinkAndTellTheDecodeWorkerWhenTheDecodeServerProcessIsKilled() throws Exception {
        try (PushNode prefillNode = PushNode.start("tcp", MidPush.longDeadlines());
                PushServerProcess decodeServer = new PushServerProcess(MidPush.DEADLINE);
                MidPush push = new MidPush(prefillNode.port(), decodeServer.port(), "sd", 4)) {
            decodeServer.sigkill();

            // the prefill worker keeps computing; its server gives up without waiting for the push deadline
            assertThat(push.pushState.awaitTerminal(VERDICT)).isEqualTo(LoadStateShm.FAILURE);
            assertThat(prefillNode.engine.view().pushFailures()).isEqualTo(1);
            // the decode worker's load_state will never be written; its client sees the server is gone
            assertThat(push.decodeClient.awaitVerdict(push.loadState, VERDICT))
                    .isEqualTo(PushClient.Verdict.SERVER_GONE);
            assertThat(push.loadState.state()).isEqualTo(LoadStateShm.PENDING);
        }
    }
}
