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
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.test.annotation.DirtiesContext;

/**
 * The one read rule for the admin views, per endpoint family ({@code /transfer}, {@code /pd}, {@code /api/admin/*}),
 * on a server whose HTTP listener is on all interfaces with an admin token, as in a pod. Outside the rule: a caller
 * off this host without the token (played by connecting to this machine's own non-loopback address, which the kernel
 * then uses as the source). Inside: the same caller with the token, and a caller on this host without one.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=0.0.0.0",
            "pega.admin.token=" + AdminReadPolicyTest.TOKEN,
            "pega.pool.size=16MB",
            "pega.device.backend=host",
            "pega.rdma.enabled=true",
            "pega.rdma.nics=lo",
            "pega.rdma.transports=tcp",
            "pega.pd.enabled=true",
            "pega.pd.transports=tcp"
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AdminReadPolicyTest {
    static final String TOKEN = "read-policy-test-token";
    private static final String LOCAL = "127.0.0.1";
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** One view of each family, and a second document of the admin API. */
    private static final List<String> VIEWS = List.of("/transfer", "/pd", "/api/admin/overview", "/api/admin/leases");

    private static @Nullable String remote;

    @Autowired
    Environment env;

    @BeforeAll
    static void findNonLoopbackAddress() throws SocketException {
        remote = NetworkInterface.networkInterfaces()
                .filter(AdminReadPolicyTest::isUpAndNotLoopback)
                .flatMap(NetworkInterface::inetAddresses)
                .filter(a -> a instanceof Inet4Address && !a.isLoopbackAddress())
                .map(InetAddress::getHostAddress)
                .findFirst()
                .orElse(null);
    }

    private static boolean isUpAndNotLoopback(NetworkInterface nic) {
        try {
            return nic.isUp() && !nic.isLoopback();
        } catch (SocketException e) {
            return false;
        }
    }

    private static String remote() {
        String r = remote;
        assumeTrue(r != null, "no non-loopback IPv4 address to act as a remote caller");
        return r;
    }

    private HttpResponse<String> get(String host, String path, String authorization)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        URI.create("http://" + host + ":" + env.getProperty("local.server.port") + path))
                .timeout(Duration.ofSeconds(10))
                .GET();
        if (!authorization.isEmpty()) {
            request.header("Authorization", authorization);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldRefuseEveryAdminViewToACallerOffThisHostWithoutTheToken() throws Exception {
        String from = remote();
        for (String path : VIEWS) {
            for (String authorization : List.of("", "Bearer wrong-token", "Basic " + TOKEN)) {
                HttpResponse<String> r = get(from, path, authorization);
                assertThat(r.statusCode())
                        .as("%s with '%s'", path, authorization)
                        .isEqualTo(403);
                assertThat(r.body()).as(path).isEqualTo(AdminReadFilter.DENIED);
            }
        }
    }

    @Test
    void shouldServeEveryAdminViewToACallerOffThisHostWithTheToken() throws Exception {
        String from = remote();
        for (String path : VIEWS) {
            assertJson(path, get(from, path, "Bearer " + TOKEN));
        }
        assertThat(get(from, "/transfer", "Bearer " + TOKEN).body()).contains("\"lanes\"");
        assertThat(get(from, "/pd", "Bearer " + TOKEN).body()).contains("\"receivesInFlight\"");
    }

    @Test
    void shouldServeEveryAdminViewToACallerOnThisHostWithoutAToken() throws Exception {
        for (String path : VIEWS) {
            assertJson(path, get(LOCAL, path, ""));
        }
    }

    @Test
    void shouldServeTheDocumentsTheDashboardNeedsBeforeItHasTheToken() throws Exception {
        String from = remote();
        for (String path : List.of("/api/admin/info", "/api/admin/access")) {
            assertJson(path, get(from, path, ""));
        }
        assertThat(get(from, "/api/admin/access", "").body()).contains("\"permitted\":false");
    }

    @Test
    void shouldServeNoSpellingOfAnAdminViewOutsideTheRule() throws Exception {
        // the filter judges the servlet path (decoded, dot segments resolved, path parameters and repeated slashes
        // gone), the path Spring maps: no other spelling reaches a view unguarded
        String from = remote();
        for (String path : List.of(
                "/transfer;x=1",
                "/pd;jsessionid=1",
                "/api/admin/./overview",
                "/api/admin/x/../leases",
                "//api/admin/overview",
                "/api/admin//instances",
                "/api/admin/info/../overview")) {
            HttpResponse<String> r = get(from, path, "");
            assertThat(r.statusCode()).as(path + ": " + r.body()).isNotEqualTo(200);
            assertThat(r.body()).as(path).doesNotContain("\"pool\"", "\"peers\"", "\"instances\"");
        }
    }

    @Test
    void shouldGuardExactlyTheAdminViews() {
        assertThat(List.of("/transfer", "/pd", "/api/admin/overview", "/api/admin/transfer", "/api/admin/instances"))
                .allMatch(AdminReadFilter::guards);
        assertThat(List.of("/api/admin/info", "/api/admin/access", "/instances", "/metrics", "/health", "/"))
                .noneMatch(AdminReadFilter::guards);
    }

    private static void assertJson(String path, HttpResponse<String> r) {
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type"))
                .as(path)
                .hasValueSatisfying(t -> assertThat(t).startsWith("application/json"));
    }
}
