package io.pegaflow.server.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.server.grpc.GrpcPort;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * TLS for both listeners through one Spring SSL bundle (docs/security.md): a self-signed certificate made with the
 * JDK's keytool for this run, {@code server.ssl.bundle} for HTTP and {@code spring.grpc.server.ssl.bundle} for gRPC.
 * Clients that trust the certificate get answers over TLS; plaintext clients get none.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host",
            "server.ssl.bundle=pega",
            "spring.grpc.server.ssl.bundle=pega"
        })
@Timeout(120)
class TlsTest {
    private static final String PASSWORD = "tls-test-password";
    private static final Path DIR = tempDir();
    private static final Path KEYSTORE = DIR.resolve("server.p12");
    private static final Path CERT = DIR.resolve("server.pem");

    @Autowired
    GrpcPort grpcPort;

    @Value("${local.server.port}")
    int httpPort;

    private static Path tempDir() {
        try {
            return Files.createTempDirectory("pega-tls-test");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @DynamicPropertySource
    static void bundle(DynamicPropertyRegistry registry) throws Exception {
        if (!Files.exists(KEYSTORE)) {
            keytool(
                    "-genkeypair",
                    "-alias",
                    "pega",
                    "-keyalg",
                    "EC",
                    "-groupname",
                    "secp256r1",
                    "-dname",
                    "CN=localhost",
                    "-ext",
                    "SAN=IP:127.0.0.1,DNS:localhost",
                    "-validity",
                    "2",
                    "-storetype",
                    "PKCS12",
                    "-keystore",
                    KEYSTORE.toString(),
                    "-storepass",
                    PASSWORD);
            keytool(
                    "-exportcert",
                    "-rfc",
                    "-alias",
                    "pega",
                    "-keystore",
                    KEYSTORE.toString(),
                    "-storepass",
                    PASSWORD,
                    "-file",
                    CERT.toString());
        }
        registry.add("spring.ssl.bundle.jks.pega.keystore.location", () -> "file:" + KEYSTORE);
        registry.add("spring.ssl.bundle.jks.pega.keystore.password", () -> PASSWORD);
        registry.add("spring.ssl.bundle.jks.pega.keystore.type", () -> "PKCS12");
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> cmd = new java.util.ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
    }

    private static SSLContext trusting() throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(CERT)) {
            trust.setCertificateEntry(
                    "pega", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        return context;
    }

    @Test
    void shouldServeHttpOverTlsOnly() throws Exception {
        HttpClient tls = HttpClient.newBuilder()
                .sslContext(trusting())
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        HttpResponse<String> health = tls.send(
                HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + httpPort + "/health"))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).isEqualTo("ok");

        HttpClient plain =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> refused = plain.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/health"))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode())
                .as("Tomcat answers plain HTTP on a TLS port with 400")
                .isEqualTo(400);
        assertThat(refused.body()).doesNotContain("ok");
    }

    @Test
    void shouldServeGrpcOverTlsOnly() throws Exception {
        ManagedChannel tls = Grpc.newChannelBuilderForAddress(
                        "127.0.0.1",
                        grpcPort.port(),
                        TlsChannelCredentials.newBuilder()
                                .trustManager(CERT.toFile())
                                .build())
                .build();
        ManagedChannel plain = Grpc.newChannelBuilderForAddress(
                        "127.0.0.1", grpcPort.port(), InsecureChannelCredentials.create())
                .build();
        try {
            assertThat(EngineGrpc.newBlockingStub(tls)
                            .withDeadlineAfter(10, TimeUnit.SECONDS)
                            .health(HealthRequest.getDefaultInstance())
                            .getStatus()
                            .getOk())
                    .isTrue();
            assertThatThrownBy(() -> EngineGrpc.newBlockingStub(plain)
                            .withDeadlineAfter(10, TimeUnit.SECONDS)
                            .health(HealthRequest.getDefaultInstance()))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode())
                                    .isIn(Status.Code.UNAVAILABLE, Status.Code.INTERNAL));
        } finally {
            tls.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            plain.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
