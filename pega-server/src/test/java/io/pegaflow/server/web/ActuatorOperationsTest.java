package io.pegaflow.server.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * {@code /actuator/info} carries build and git information, and {@code /actuator/loggers} changes a level at runtime
 * under the admin rule: loopback may, a remote caller needs the token. The server listens on all interfaces, so a
 * request to this machine's own non-loopback address arrives from that address, i.e. remote.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=0.0.0.0",
            "pega.pool.size=16MB",
            "pega.device.backend=host",
            "pega.admin.token=" + ActuatorOperationsTest.TOKEN,
            "management.endpoints.web.exposure.include=health,info,prometheus,loggers"
        })
@Timeout(120)
class ActuatorOperationsTest {
    static final String TOKEN = "actuator-operations-test";
    private static final String LOGGER = "/actuator/loggers/io.pegaflow.server.web";
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Value("${local.server.port}")
    int port;

    private HttpResponse<String> send(String host, String path, String body, String auth)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (auth != null) {
            b.header("Authorization", auth);
        }
        if (body != null) {
            b.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String level(String level) {
        return "{\"configuredLevel\":\"" + level + "\"}";
    }

    @Test
    void shouldShowBuildAndGitInformation() throws Exception {
        HttpResponse<String> info = send("127.0.0.1", "/actuator/info", null, null);
        assertThat(info.statusCode()).isEqualTo(200);
        assertThat(info.body()).contains("\"build\"").contains("\"artifact\":\"pega-server\"");
        if (Files.exists(Path.of("..", ".git"))) {
            assertThat(info.body()).contains("\"git\"").contains("\"commit\"");
        }
    }

    /**
     * The listener is bound to 0.0.0.0: not loopback-only, so a loopback caller needs the token too (decision 0011).
     */
    @Test
    void shouldNeedTheTokenFromLoopbackOnANonLoopbackListener() throws Exception {
        HttpResponse<String> denied = send("127.0.0.1", LOGGER, level("TRACE"), null);
        assertThat(denied.statusCode()).isEqualTo(403);
        assertThat(denied.body()).isEqualTo(OperationsController.DENIED);
        assertThat(send("127.0.0.1", LOGGER, level("TRACE"), "Bearer " + TOKEN).statusCode())
                .isEqualTo(204);
        assertThat(send("127.0.0.1", LOGGER, null, null).body()).contains("\"configuredLevel\":\"TRACE\"");
        assertThat(send("127.0.0.1", LOGGER, level("INFO"), "Bearer " + TOKEN).statusCode())
                .isEqualTo(204);
    }

    @Test
    void shouldChangeALogLevelFromARemoteCallerOnlyWithTheToken() throws Exception {
        String remote = nonLoopbackAddress();
        assumeTrue(remote != null, "no non-loopback IPv4 address to act as a remote caller");
        HttpResponse<String> denied = send(remote, LOGGER, level("DEBUG"), null);
        assertThat(denied.statusCode()).isEqualTo(403);
        assertThat(denied.body()).isEqualTo(OperationsController.DENIED);
        assertThat(send(remote, LOGGER, level("DEBUG"), "Bearer wrong").statusCode())
                .isEqualTo(403);
        assertThat(send(remote, LOGGER, null, null).body()).doesNotContain("\"configuredLevel\":\"DEBUG\"");

        assertThat(send(remote, LOGGER, level("DEBUG"), "Bearer " + TOKEN).statusCode())
                .isEqualTo(204);
        assertThat(send(remote, LOGGER, null, null).body()).contains("\"configuredLevel\":\"DEBUG\"");
        assertThat(send("127.0.0.1", LOGGER, level("INFO"), "Bearer " + TOKEN).statusCode())
                .isEqualTo(204);
    }

    private static String nonLoopbackAddress() throws SocketException {
        return NetworkInterface.networkInterfaces()
                .filter(nic -> {
                    try {
                        return nic.isUp() && !nic.isLoopback();
                    } catch (SocketException e) {
                        return false;
                    }
                })
                .flatMap(NetworkInterface::inetAddresses)
                .filter(a -> a instanceof Inet4Address && !a.isLoopbackAddress())
                .map(InetAddress::getHostAddress)
                .findFirst()
                .orElse(null);
    }
}
