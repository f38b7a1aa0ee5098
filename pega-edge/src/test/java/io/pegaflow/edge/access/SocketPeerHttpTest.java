package io.pegaflow.edge.access;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.edge.EdgeTestSupport;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Over real HTTP with forwarded headers trusted: Tomcat rewrites the remote address from {@code X-Forwarded-For}, and
 * the admin rule still judges the connection's own peer.
 */
@Timeout(60)
class SocketPeerHttpTest extends EdgeTestSupport {
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private String peer(String forwardedFor) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort() + "/peer"))
                .timeout(Duration.ofSeconds(10));
        if (forwardedFor != null) {
            request.header("X-Forwarded-For", forwardedFor);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void shouldAdmitTheLoopbackPeer() throws Exception {
        assertThat(peer(null)).isEqualTo("remote=127.0.0.1 admitted=true");
    }

    @Test
    void shouldJudgeTheSocketPeerWhateverXForwardedForClaims() throws Exception {
        // Tomcat now believes the caller is 203.0.113.9; the rule still sees the loopback connection.
        assertThat(peer("203.0.113.9")).isEqualTo("remote=203.0.113.9 admitted=true");
    }
}
