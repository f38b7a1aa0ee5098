package io.pegaflow.server.transfer;

import static io.pegaflow.server.transfer.RemoteFetchNodes.HOST;
import static io.pegaflow.server.transfer.RemoteFetchNodes.LAYOUT;
import static io.pegaflow.server.transfer.RemoteFetchNodes.freePort;
import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.TlsServerCredentials;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.node.PegaNode;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.TestCertificates;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A remote fetch with every connection of the cluster on mutual TLS (decision 0031 §2): two whole servers whose gRPC
 * listeners require a client certificate of the cluster's CA and which dial each other and the metaserver with
 * {@code pega.cluster.ssl-bundle}, and a metaserver that requires one too. The handshake, the lock, the release and
 * every announcement go over TLS, and B loads A's bytes exactly.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RemoteFetchMutualTlsTest {
    static final String NAMESPACE = "ns-tls";
    static final Duration WAIT = Duration.ofSeconds(30);

    private static InputStream resource(String name) {
        return Objects.requireNonNull(
                TestCertificates.class.getClassLoader().getResourceAsStream("io/pegaflow/testkit/tls/" + name), name);
    }

    private static OwnerIndexMetaServer metaserver() throws IOException {
        try (InputStream cert = resource("node.crt");
                InputStream key = resource("node.key");
                InputStream ca = resource("cluster-ca.crt")) {
            return new OwnerIndexMetaServer(TlsServerCredentials.newBuilder()
                    .keyManager(cert, key)
                    .trustManager(ca)
                    .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE)
                    .build());
        }
    }

    private static ConfigurableApplicationContext start(OwnerIndexMetaServer metaserver, int port) {
        List<String> args = new ArrayList<>(List.of(
                "--spring.grpc.server.ssl.bundle=cluster",
                "--spring.grpc.server.ssl.client-auth=require",
                "--pega.cluster.ssl-bundle=cluster",
                "--pega.cluster.token=remote-fetch-mtls-test-secret-01"));
        args.addAll(TestCertificates.pemBundle("cluster", TestCertificates.NODE, TestCertificates.CLUSTER_CA));
        return RemoteFetchNodes.start(metaserver, port, args);
    }

    @Test
    void shouldFetchByteExactOverMutualTls() throws Exception {
        BlockPattern pattern = BlockPattern.perByte(95);
        List<ByteString> hashes = BlockPattern.hashes(95, 6);
        int portA = freePort();
        int portB = freePort();
        try (OwnerIndexMetaServer metaserver = metaserver();
                ConfigurableApplicationContext a = start(metaserver, portA);
                ConfigurableApplicationContext b = start(metaserver, portB)) {
            // the workers are local clients of a listener that requires a certificate: they present one too
            try (MockVllmWorker owner = MockVllmWorker.builder(HOST, portA)
                            .tls(TestCertificates.client(TestCertificates.NODE, TestCertificates.CLUSTER_CA))
                            .instanceId("owner-tls")
                            .namespace(NAMESPACE)
                            .layer("layer_0", LAYOUT)
                            .build();
                    MockVllmWorker reader = MockVllmWorker.builder(HOST, portB)
                            .tls(TestCertificates.client(TestCertificates.NODE, TestCertificates.CLUSTER_CA))
                            .instanceId("reader-tls")
                            .namespace(NAMESPACE)
                            .layer("layer_0", LAYOUT)
                            .build();
                    MockScheduler scheduler = MockScheduler.connect(
                            HOST, portB, TestCertificates.client(TestCertificates.NODE, TestCertificates.CLUSTER_CA))) {
                owner.register();
                owner.fillBlocks(blockIds(6), pattern);
                owner.save(blockIds(6), hashes);
                await().atMost(WAIT)
                        .untilAsserted(() -> assertThat(hashes)
                                .allSatisfy(h -> assertThat(metaserver.ownersOf(NAMESPACE, h))
                                        .contains(HOST + ":" + portA)));
                reader.register();
                QueryReady ready = scheduler.queryUntilReady(reader.instanceId(), hashes, "req-tls", WAIT);
                assertThat(ready.getNumHitBlocks()).isEqualTo(6);
                assertThat(reader.load(ready.getLease(), blockIds(6)).succeeded())
                        .isTrue();
                reader.verifyBlocks(blockIds(6), pattern);
                reader.unregister();
                owner.unregister();
            }
            // the release went over TLS too: no lock session is left on the owner
            await().atMost(WAIT)
                    .until(() -> a.getBean(PegaEngine.class).transferLockStats().sessions() == 0);
            assertThat(b.getBean(PegaNode.class)
                            .remoteTier()
                            .orElseThrow()
                            .stats()
                            .blocksFetched())
                    .isEqualTo(6);
        }
    }
}
