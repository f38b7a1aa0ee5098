package io.pegaflow.server.internode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.InsecureServerCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.pegaflow.edge.access.ClusterChannels;
import io.pegaflow.edge.access.ClusterCredential;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.testkit.TestCertificates;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.pem.PemSslStoreBundle;
import org.springframework.boot.ssl.pem.PemSslStoreDetails;

/**
 * The server's metaserver client carries the cluster credential and, with {@code pega.cluster.ssl-bundle}, its client
 * certificate (decision 0031 §1–2), against a MetaServer over real gRPC that requires them: with them its node
 * registers and announces; without the token, or with a certificate of another CA, its heartbeats fail and nothing is
 * registered.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetaserverClientCredentialTest {
    static final String TOKEN = "client-credential-test-secret-01";
    static final String NODE = "10.20.0.9:50055";
    static final String TLS_DIR = "classpath:io/pegaflow/testkit/tls/";

    final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private FakeMetaServer metaserver(ServerCredentials transport) throws IOException {
        FakeMetaServer m = new FakeMetaServer(
                transport,
                ClusterCredential.checked(TOKEN)
                        .require(Set.of(
                                MetaServerGrpc.getHeartbeatNodeMethod().getFullMethodName(),
                                MetaServerGrpc.getInsertBlockHashesMethod().getFullMethodName())));
        open.add(m);
        return m;
    }

    private MetaserverClient client(FakeMetaServer m, ClusterChannels cluster) {
        MetaserverClientSettings settings = new MetaserverClientSettings(
                m.target(),
                NODE,
                16,
                Duration.ofMillis(100),
                Duration.ofSeconds(2),
                64,
                Duration.ofMillis(20),
                Duration.ofMillis(200));
        MetaserverClient c =
                new MetaserverClient(settings, () -> null, NanoClock.SYSTEM, new AgentGroup(), cluster).start();
        open.add(c);
        return c;
    }

    private static SslBundle bundle(String leaf) {
        return SslBundle.of(new PemSslStoreBundle(
                PemSslStoreDetails.forCertificate(TLS_DIR + leaf + ".crt").withPrivateKey(TLS_DIR + leaf + ".key"),
                PemSslStoreDetails.forCertificate(TLS_DIR + TestCertificates.CLUSTER_CA + ".crt")));
    }

    private static ServerCredentials mutualTls() throws IOException {
        try (InputStream cert = resource("node.crt");
                InputStream key = resource("node.key");
                InputStream ca = resource("cluster-ca.crt")) {
            return TlsServerCredentials.newBuilder()
                    .keyManager(cert, key)
                    .trustManager(ca)
                    .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE)
                    .build();
        }
    }

    private static InputStream resource(String name) {
        return Objects.requireNonNull(
                TestCertificates.class.getClassLoader().getResourceAsStream("io/pegaflow/testkit/tls/" + name), name);
    }

    @Test
    void shouldRegisterWithTheTokenAndBeRefusedWithoutIt() throws Exception {
        FakeMetaServer m = metaserver(InsecureServerCredentials.create());
        MetaserverClient stranger = client(m, ClusterChannels.plaintext(ClusterCredential.of("")));
        await().atMost(Duration.ofSeconds(10)).until(() -> stranger.stats().heartbeatFailures() >= 2);
        assertThat(stranger.lastFailure()).contains("UNAUTHENTICATED");
        assertThat(m.sessions).isEmpty();
        stranger.close();

        MetaserverClient member = client(m, ClusterChannels.plaintext(ClusterCredential.checked(TOKEN)));
        await().atMost(Duration.ofSeconds(10)).until(() -> m.sessions.containsKey(NODE));
        member.onSealed("ns", List.of(new byte[32]));
        await().atMost(Duration.ofSeconds(10)).until(() -> m.blocks.size() == 1);
    }

    @Test
    void shouldDialOverMutualTlsWithTheClusterBundle() throws Exception {
        FakeMetaServer m = metaserver(mutualTls());
        MetaserverClient stranger =
                client(m, ClusterChannels.tls(bundle(TestCertificates.STRANGER), ClusterCredential.checked(TOKEN)));
        await().atMost(Duration.ofSeconds(10)).until(() -> stranger.stats().heartbeatFailures() >= 2);
        assertThat(m.sessions).isEmpty();
        stranger.close();

        client(m, ClusterChannels.tls(bundle(TestCertificates.NODE), ClusterCredential.checked(TOKEN)));
        await().atMost(Duration.ofSeconds(10)).until(() -> m.sessions.containsKey(NODE));
    }
}
