package io.pegaflow.server.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * Decision 0011, defect 7: remote callers that trickle a request body one byte at a time must not hold the HTTP
 * workers. Tomcat runs 8 workers here; three times as many raw sockets from this host's non-loopback address (a remote
 * peer to the admin rule, as in {@code AdminAccessTest}) send form POSTs to the cleanup endpoints, POSTs elsewhere and
 * a GET with a body, each declaring 4000 bytes and sending one per 500 ms. Each is refused 403 before its body is read,
 * and {@code /health}, {@code /metrics} and the liveness probe keep answering while they trickle.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=0.0.0.0",
            "server.tomcat.threads.max=8",
            "server.tomcat.threads.min-spare=2",
            "pega.pool.size=16MB",
            "pega.device.backend=host"
        })
@Timeout(120)
class SlowBodyStarvationTest {
    private static final int SLOW_CLIENTS = 24;
    private static final List<String> REQUESTS = List.of(
            "POST /instances/cleanup HTTP/1.1",
            "POST /cache/memory/cleanup HTTP/1.1",
            "POST /health HTTP/1.1",
            "POST /actuator/loggers/ROOT HTTP/1.1",
            "GET /metrics HTTP/1.1");
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private static String remote;

    @Value("${local.server.port}")
    int port;

    @BeforeAll
    static void findNonLoopbackAddress() throws SocketException {
        remote = NetworkInterface.networkInterfaces()
                .filter(SlowBodyStarvationTest::isUpAndNotLoopback)
                .flatMap(NetworkInterface::inetAddresses)
                .filter(a -> a instanceof Inet4Address && !a.isLoopbackAddress())
                .map(InetAddress::getHostAddress)
                .findFirst()
                .orElse(null);
        assumeTrue(remote != null, "no non-loopback IPv4 address to act as a remote caller");
    }

    private static boolean isUpAndNotLoopback(NetworkInterface nic) {
        try {
            return nic.isUp() && !nic.isLoopback();
        } catch (SocketException e) {
            return false;
        }
    }

    @Test
    void shouldRefuseSlowBodiesUnreadAndKeepServingProbes() throws Exception {
        List<Socket> sockets = new ArrayList<>();
        ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
        try {
            for (int i = 0; i < SLOW_CLIENTS; i++) {
                Socket s = new Socket();
                s.connect(new InetSocketAddress(remote, port), 2000);
                s.setSoTimeout(10_000);
                String head = REQUESTS.get(i % REQUESTS.size()) + "\r\nHost: pega\r\n"
                        + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 4000\r\n\r\ni";
                s.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                sockets.add(s);
            }
            ScheduledFuture<?> ticking = trickle.scheduleAtFixedRate(
                    () -> sockets.forEach(SlowBodyStarvationTest::sendOneByte), 500, 500, TimeUnit.MILLISECONDS);
            assertThat(ticking.isDone()).isFalse();

            for (String path : List.of("/health", "/metrics", "/actuator/health/liveness")) {
                HttpResponse<String> r = HTTP.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as(path).isEqualTo(200);
            }
            for (Socket s : sockets) {
                String status = statusLine(s.getInputStream());
                assertThat(status).as("answered before the body arrived").isEqualTo("HTTP/1.1 403 ");
            }
        } finally {
            trickle.shutdownNow();
            trickle.awaitTermination(5, TimeUnit.SECONDS);
            for (Socket s : sockets) {
                s.close();
            }
        }
        HttpResponse<String> health = HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                        .timeout(Duration.ofSeconds(5))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(health.body()).isEqualTo("ok");
    }

    private static void sendOneByte(Socket s) {
        try {
            OutputStream out = s.getOutputStream();
            out.write('x');
            out.flush();
        } catch (IOException closedByTheServer) {
            // expected once the refusal closed the connection
        }
    }

    /** The first 13 bytes of the response: {@code HTTP/1.1 NNN }. */
    private static String statusLine(InputStream in) throws IOException {
        byte[] status = in.readNBytes(13);
        return new String(status, StandardCharsets.US_ASCII);
    }
}
