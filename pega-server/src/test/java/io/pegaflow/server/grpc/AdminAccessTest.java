package io.pegaflow.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.proto.ShutdownRequest;
import io.pegaflow.proto.ShutdownResponse;
import io.pegaflow.server.ChildServer;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockVllmWorker;
import java.io.IOException;
import java.net.ConnectException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutating operations (the Shutdown RPC, the HTTP cleanup endpoints) need {@code pega.admin.token} from callers off
 * loopback; the reference served them to anyone. The servers run as child JVMs because an accepted Shutdown ends the
 * process, and bind to all interfaces: connecting to this machine's own non-loopback address makes the kernel use it
 * as the source, so the server sees a remote peer without a second machine.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class AdminAccessTest {
    private static final String TOKEN = "admin-access-test-token";
    private static final String RPC_DENIED = EngineGrpcService.SHUTDOWN_DENIED;
    private static final String HTTP_DENIED = io.pegaflow.edge.access.AdmissionValve.DENIED;
    private static final List<String> MUTATING = List.of("/instances/cleanup", "/cache/memory/cleanup");
    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static String remote;

    @TempDir
    Path dir;

    @BeforeAll
    static void findNonLoopbackAddress() throws SocketException {
        remote = NetworkInterface.networkInterfaces()
                .filter(AdminAccessTest::isUpAndNotLoopback)
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

    private ChildServer start(String name, String... extraArgs) throws IOException {
        List<String> args = new ArrayList<>(List.of(
                "--server.address=0.0.0.0",
                "--spring.grpc.server.host=0.0.0.0",
                "--logging.level.io.pegaflow.server.grpc=INFO"));
        args.addAll(List.of(extraArgs));
        return ChildServer.start(name, dir, args.toArray(String[]::new));
    }

    @Test
    void shouldServeRemoteMutationsOnlyWithTheAdminToken() throws Exception {
        try (ChildServer server = start("with-token", "--pega.admin.token=" + TOKEN);
                MockVllmWorker worker = MockVllmWorker.builder(remote, server.grpcPort())
                        .instanceId("remote-worker")
                        .namespace("admin-ns")
                        .sharedLayers(List.of("layer_0"), KvLayout.contiguous(4, 1024))
                        .build()) {
            try {
                worker.register();
                assertThat(get(server, "/health").body()).isEqualTo("ok");
                assertThat(get(server, "/instances").body()).contains("remote-worker");
                for (String path : MUTATING) {
                    assertDenied(post(server, path, null));
                    assertDenied(post(server, path, "Bearer wrong-token"));
                    assertDenied(post(server, path, TOKEN)); // the scheme is part of the header
                }
                assertThat(get(server, "/instances").body())
                        .as("a refused cleanup removes nothing")
                        .contains("remote-worker");

                HttpResponse<String> memory = post(server, "/cache/memory/cleanup", "Bearer " + TOKEN);
                assertThat(memory.statusCode()).isEqualTo(200);
                assertThat(memory.body()).contains("\"evicted_blocks\"");
                HttpResponse<String> instances = post(server, "/instances/cleanup", "Bearer " + TOKEN);
                assertThat(instances.statusCode()).isEqualTo(200);
                assertThat(instances.body()).contains("\"removed_instances\":[\"remote-worker\"]");
                assertThat(get(server, "/instances").body()).isEqualTo("{\"instances\":[],\"connectors\":{}}");

                assertShutdownDenied(server, null);
                assertShutdownDenied(server, "Bearer wrong-token");
                assertStillServing(server);

                assertThat(shutdown(remote, server, "Bearer " + TOKEN)
                                .getStatus()
                                .getOk())
                        .isTrue();
                assertExitedCleanly(server);
            } catch (AssertionError | RuntimeException | IOException e) {
                throw server.failure("server with an admin token misbehaved", e);
            }
        }
    }

    /**
     * Bound to 0.0.0.0 without a token: no listener is loopback-only, so every mutation is refused, from loopback too
     * (a pod sharing the node, a sidecar or a proxy on the host would look local), with the text saying how to enable
     * them (decision 0011).
     */
    @Test
    void shouldRefuseEveryMutationOnANonLoopbackListenerWithoutAToken() throws Exception {
        try (ChildServer server = start("no-token")) {
            try {
                // An empty bearer must not match the unset (empty) token.
                for (String path : MUTATING) {
                    assertDenied(post(server, path, "Bearer "));
                    assertDenied(HTTP.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + path))
                                    .timeout(Duration.ofSeconds(10))
                                    .header("X-Pega-Request", "1")
                                    .POST(HttpRequest.BodyPublishers.noBody())
                                    .build(),
                            HttpResponse.BodyHandlers.ofString()));
                }
                assertShutdownDenied(server, null);
                assertShutdownDenied(server, "Bearer ");
                assertThatThrownBy(() -> shutdown("127.0.0.1", server, null))
                        .isInstanceOfSatisfying(
                                StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getDescription()).isEqualTo(RPC_DENIED));
                assertStillServing(server);
            } catch (AssertionError | RuntimeException | IOException e) {
                throw server.failure("server without an admin token misbehaved", e);
            }
        }
    }

    /** Bound to 127.0.0.1: a loopback-only listener admits local callers without a token. */
    @Test
    void shouldObeyLoopbackCallersOfALoopbackOnlyListener() throws Exception {
        try (ChildServer server = ChildServer.start(
                "loopback-only",
                dir,
                "--server.address=127.0.0.1",
                "--spring.grpc.server.host=127.0.0.1",
                "--logging.level.io.pegaflow.server.grpc=INFO")) {
            try {
                HttpResponse<String> cleanup = HTTP.send(
                        HttpRequest.newBuilder(
                                        URI.create("http://127.0.0.1:" + server.httpPort() + "/cache/memory/cleanup"))
                                .timeout(Duration.ofSeconds(10))
                                .header("X-Pega-Request", "1")
                                .POST(HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(cleanup.statusCode()).isEqualTo(200);
                assertThat(shutdown("127.0.0.1", server, null).getStatus().getOk())
                        .isTrue();
                assertExitedCleanly(server);
            } catch (AssertionError | RuntimeException | IOException e) {
                throw server.failure("loopback-only server misbehaved", e);
            }
        }
    }

    /**
     * Decision 0011, defect 6: with forwarded headers trusted (Spring Boot's default on Kubernetes; here every peer is
     * trusted), Tomcat takes {@code X-Forwarded-For: 127.0.0.1} as the caller's address. The access log proves that
     * Tomcat believed it; the admin rule judges the socket peer and still refuses.
     */
    @Test
    void shouldRefuseARemoteCallerThatClaimsLoopbackInXForwardedFor() throws Exception {
        Path accessLogs = dir.resolve("access-logs");
        try (ChildServer server = start(
                "forwarded",
                "--server.forward-headers-strategy=native",
                "--server.tomcat.remoteip.internal-proxies=.*",
                "--server.tomcat.accesslog.enabled=true",
                "--server.tomcat.accesslog.buffered=false",
                "--server.tomcat.accesslog.request-attributes-enabled=true",
                "--server.tomcat.accesslog.directory=" + accessLogs,
                "--server.tomcat.accesslog.pattern=%a %r")) {
            try {
                for (String path : MUTATING) {
                    HttpRequest forged = request(server, path)
                            .header("X-Forwarded-For", "127.0.0.1")
                            .POST(HttpRequest.BodyPublishers.noBody())
                            .build();
                    assertDenied(HTTP.send(forged, HttpResponse.BodyHandlers.ofString()));
                }
                assertThat(accessLog(accessLogs))
                        .as("Tomcat took the forged header as the caller's address")
                        .contains("127.0.0.1 POST /instances/cleanup");
                assertStillServing(server);
            } catch (AssertionError | RuntimeException | IOException e) {
                throw server.failure("server trusting forwarded headers misbehaved", e);
            }
        }
    }

    private static String accessLog(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            StringBuilder text = new StringBuilder();
            for (Path file : files.toList()) {
                text.append(Files.readString(file, StandardCharsets.UTF_8));
            }
            return text.toString();
        }
    }

    private static void assertDenied(HttpResponse<String> response) {
        assertThat(response.statusCode()).as(response.uri().toString()).isEqualTo(403);
        assertThat(response.body()).isEqualTo(HTTP_DENIED);
    }

    private static void assertShutdownDenied(ChildServer server, String authorization) {
        assertThatThrownBy(() -> shutdown(remote, server, authorization))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
                    assertThat(e.getStatus().getDescription()).isEqualTo(RPC_DENIED);
                });
    }

    /** A refused Shutdown must leave the server answering, not merely answer before it stops. */
    private static void assertStillServing(ChildServer server) throws IOException, InterruptedException {
        ManagedChannel channel = channel(remote, server);
        try {
            assertThat(EngineGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(10, TimeUnit.SECONDS)
                            .health(HealthRequest.getDefaultInstance())
                            .getStatus()
                            .getOk())
                    .isTrue();
        } finally {
            channel.shutdownNow();
        }
        assertThat(get(server, "/health").statusCode()).isEqualTo(200);
        assertThat(server.process().isAlive()).isTrue();
    }

    private static void assertExitedCleanly(ChildServer server) throws InterruptedException {
        assertThat(server.process().waitFor(30, TimeUnit.SECONDS))
                .as("exited after Shutdown")
                .isTrue();
        assertThat(server.process().exitValue()).isZero();
        assertThat(server.logText()).contains("Shutdown RPC received");
        assertThatThrownBy(() -> new Socket(InetAddress.getLoopbackAddress(), server.grpcPort()).close())
                .isInstanceOf(ConnectException.class);
    }

    private static ShutdownResponse shutdown(String host, ChildServer server, String authorization) {
        ManagedChannel channel = channel(host, server);
        try {
            EngineGrpc.EngineBlockingStub stub =
                    EngineGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
            if (authorization != null) {
                Metadata headers = new Metadata();
                headers.put(AUTHORIZATION, authorization);
                stub = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
            }
            return stub.shutdown(ShutdownRequest.getDefaultInstance());
        } finally {
            channel.shutdownNow();
        }
    }

    private static ManagedChannel channel(String host, ChildServer server) {
        return ManagedChannelBuilder.forAddress(host, server.grpcPort())
                .usePlaintext()
                .build();
    }

    private static HttpResponse<String> get(ChildServer server, String path) throws IOException, InterruptedException {
        return HTTP.send(request(server, path).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> post(ChildServer server, String path, String authorization)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = request(server, path).POST(HttpRequest.BodyPublishers.noBody());
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Marked as no web page could send it: what is judged here is the admin rule, not the cross-site one. */
    private static HttpRequest.Builder request(ChildServer server, String path) {
        return HttpRequest.newBuilder(URI.create("http://" + remote + ":" + server.httpPort() + path))
                .timeout(Duration.ofSeconds(10))
                .header("X-Pega-Request", "1");
    }
}
