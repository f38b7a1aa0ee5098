package io.pegaflow.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.edge.access.ClusterChannels;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.proto.QueryBlocksForTransferRequest;
import io.pegaflow.testkit.TestCertificates;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Mutual TLS between servers through Spring SSL bundles (decision 0031 §2): the gRPC endpoint serves over TLS with
 * {@code spring.grpc.server.ssl.bundle} and requires a client certificate of the bundle's trust store
 * ({@code client-auth=require}); the server dials its cluster with {@code pega.cluster.ssl-bundle}. The server's own
 * cluster channels (what its peer links, decode links and metaserver client use) get through, to the engine RPCs and
 * to the peer RPCs, which also need the cluster token; a client with a certificate of another CA, one without a
 * certificate and a plaintext one get nothing.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host",
            "pega.rdma.enabled=true",
            "pega.rdma.nics=lo",
            "pega.rdma.transports=tcp",
            "spring.grpc.server.ssl.bundle=cluster",
            "spring.grpc.server.ssl.client-auth=require",
            "pega.cluster.ssl-bundle=cluster",
            "pega.cluster.token=mutual-tls-test-cluster-secret-1"
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GrpcMutualTlsTest {

    @Autowired
    GrpcPort port;

    @Autowired
    ClusterChannels cluster;

    @DynamicPropertySource
    static void bundle(DynamicPropertyRegistry registry) {
        for (String arg : TestCertificates.pemBundle("cluster", TestCertificates.NODE, TestCertificates.CLUSTER_CA)) {
            String kv = arg.substring(2);
            int eq = kv.indexOf('=');
            registry.add(kv.substring(0, eq), () -> kv.substring(eq + 1));
        }
    }

    private String target() {
        return "127.0.0.1:" + port.port();
    }

    @Test
    void shouldServeTheServersOwnClusterChannels() throws Exception {
        assertThat(cluster.tls()).isTrue();
        ManagedChannel channel = cluster.forTarget(target()).build();
        try {
            EngineGrpc.EngineBlockingStub stub =
                    EngineGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
            assertThat(stub.health(HealthRequest.getDefaultInstance())
                            .getStatus()
                            .getOk())
                    .isTrue();
            // a peer RPC: past TLS and the token, it reaches the service (nothing is resident, so nothing is locked)
            assertThat(stub.queryBlocksForTransfer(QueryBlocksForTransferRequest.newBuilder()
                                    .setNamespace("ns")
                                    .addBlockHashes(ByteString.copyFrom(new byte[32]))
                                    .setRequesterId("127.0.0.1:1")
                                    .build())
                            .getBlocksCount())
                    .isZero();
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldRefuseClientsWithoutACertificateOfTheClusterCa() throws Exception {
        for (ChannelCredentials refused : List.of(
                TestCertificates.client(TestCertificates.STRANGER, TestCertificates.CLUSTER_CA),
                TestCertificates.client(null, TestCertificates.CLUSTER_CA),
                InsecureChannelCredentials.create())) {
            ManagedChannel channel = Grpc.newChannelBuilder(target(), refused).build();
            try {
                EngineGrpc.EngineBlockingStub stub =
                        EngineGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
                assertThatThrownBy(() -> stub.health(HealthRequest.getDefaultInstance()))
                        .isInstanceOfSatisfying(
                                StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode())
                                        .isIn(Status.Code.UNAVAILABLE, Status.Code.INTERNAL));
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
