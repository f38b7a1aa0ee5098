package io.pegaflow.edge.access;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.edge.EdgeTestSupport;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Over a raw socket (the JDK's HttpClient will not set Host): what a rebinding page and a cross-site page send, and
 * what curl and the dashboard send. The test app's listener is loopback-only, so the admin rule admits every request
 * here: each 403 is this valve's.
 */
@Timeout(60)
class BrowserGuardHttpTest extends EdgeTestSupport {

    private String exchange(String method, String path, String... headers) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), httpPort())) {
            socket.setSoTimeout(10_000);
            StringBuilder request = new StringBuilder(method + " " + path + " HTTP/1.1\r\n");
            boolean hostGiven = false;
            for (String h : headers) {
                hostGiven |= h.regionMatches(true, 0, "Host:", 0, 5);
                request.append(h).append("\r\n");
            }
            if (!hostGiven) {
                request.append("Host: 127.0.0.1:").append(httpPort()).append("\r\n");
            }
            request.append("Content-Length: 0\r\nConnection: close\r\n\r\n");
            OutputStream out = socket.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = socket.getInputStream();
            String response = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            String status = response.substring(9, 12);
            return status + " " + response.substring(response.indexOf("\r\n\r\n") + 4);
        }
    }

    @Test
    void shouldRefuseAForeignHostEvenForAGet() throws IOException {
        assertThat(exchange("GET", "/peer", "Host: rebind.attacker.example:" + httpPort()))
                .startsWith("403 Host rebind.attacker.example")
                .contains("pega.http.allowed-hosts");
    }

    @Test
    void shouldAnswerLocalhostAndIpLiterals() throws IOException {
        assertThat(exchange("GET", "/peer", "Host: localhost:" + httpPort())).startsWith("200 ");
        assertThat(exchange("GET", "/peer", "Host: [::1]:" + httpPort())).startsWith("200 ");
        assertThat(exchange("GET", "/peer", "Host: 10.78.0.1")).startsWith("200 ");
    }

    @Test
    void shouldRefuseAMutationFromAForeignOrigin() throws IOException {
        assertThat(exchange("POST", "/mutate", "Origin: http://evil.example", "X-Pega-Request: 1"))
                .startsWith("403 cross-origin request refused: Origin http://evil.example");
    }

    @Test
    void shouldRefuseAMutationFromAnotherPortOfThisHost() throws IOException {
        assertThat(exchange("POST", "/mutate", "Origin: http://127.0.0.1:8099", "X-Pega-Request: 1"))
                .startsWith("403 cross-origin");
        assertThat(exchange("POST", "/mutate", "Sec-Fetch-Site: same-site", "X-Pega-Request: 1"))
                .startsWith("403 cross-site request refused (Sec-Fetch-Site: same-site)");
    }

    @Test
    void shouldRefuseASimpleMutation() throws IOException {
        // what a form or fetch(..., {mode: 'no-cors'}) sends when the browser sends no Origin at all
        assertThat(exchange("POST", "/mutate", "Content-Type: application/x-www-form-urlencoded"))
                .startsWith("403 mutations need the header 'X-Pega-Request: 1'");
    }

    @Test
    void shouldAdmitTheMarkerAJsonBodyOrTheDashboardsOwnOrigin() throws IOException {
        assertThat(exchange("POST", "/mutate", "X-Pega-Request: 1")).isEqualTo("200 mutated");
        assertThat(exchange("POST", "/mutate", "Content-Type: application/json; charset=utf-8"))
                .isEqualTo("200 mutated");
        assertThat(exchange(
                        "POST",
                        "/mutate",
                        "Origin: http://127.0.0.1:" + httpPort(),
                        "Sec-Fetch-Site: same-origin",
                        "X-Pega-Request: 1"))
                .isEqualTo("200 mutated");
    }

    @Test
    void shouldLeaveReadsFromAnyOriginAlone() throws IOException {
        assertThat(exchange("GET", "/peer", "Origin: http://evil.example", "Sec-Fetch-Site: cross-site"))
                .startsWith("200 ");
    }
}
