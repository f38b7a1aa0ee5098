package io.pegaflow.metaserver.grpc;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static io.pegaflow.metaserver.grpc.Requests.prefixes;
import static io.pegaflow.metaserver.grpc.Requests.query;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.testkit.TestCertificates;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutual TLS on the metaserver's gRPC port through a Spring SSL bundle ({@code spring.grpc.server.ssl.bundle},
 * {@code client-auth=require}; decision 0031 §2): a node presenting a certificate of the cluster's CA registers and
 * announces; one presenting a certificate of another CA, one presenting none and a plaintext one get no call through,
 * and nothing they sent is indexed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaServerMutualTlsTest {
    static final String NS = "ns-tls";
    static final String NODE = "10.77.2.1:50055";

    @TempDir
    Path dir;

    @Test
    void shouldServeOnlyClientsWithACertificateOfTheClusterCa() throws Exception {
        List<String> args = new ArrayList<>(
                TestCertificates.pemBundle("cluster", TestCertificates.NODE, TestCertificates.CLUSTER_CA));
        args.add("--spring.grpc.server.ssl.bundle=cluster");
        args.add("--spring.grpc.server.ssl.client-auth=require");
        args.add("--logging.level.root=WARN");
        try (MetaserverTestApp app = MetaserverTestApp.start(dir, new AdjustableClock(), args.toArray(String[]::new))) {
            String target = "localhost:" + app.grpcPort();
            UUID member = UUID.randomUUID();
            UUID stranger = UUID.randomUUID();

            for (ChannelCredentials refused : List.of(
                    TestCertificates.client(TestCertificates.STRANGER, TestCertificates.CLUSTER_CA),
                    TestCertificates.client(null, TestCertificates.CLUSTER_CA),
                    InsecureChannelCredentials.create())) {
                ManagedChannel channel = Grpc.newChannelBuilder(target, refused).build();
                try {
                    MetaServerGrpc.MetaServerBlockingStub stub =
                            MetaServerGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
                    assertThatThrownBy(() -> stub.heartbeatNode(heartbeat(NODE, stranger)))
                            .isInstanceOfSatisfying(
                                    StatusRuntimeException.class,
                                    e -> assertThat(e.getStatus().getCode())
                                            .isIn(Status.Code.UNAVAILABLE, Status.Code.INTERNAL));
                } finally {
                    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                }
            }

            ManagedChannel channel = Grpc.newChannelBuilder(
                            target, TestCertificates.client(TestCertificates.NODE, TestCertificates.CLUSTER_CA))
                    .build();
            try {
                MetaServerGrpc.MetaServerBlockingStub stub =
                        MetaServerGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
                stub.heartbeatNode(heartbeat(NODE, member));
                stub.insertBlockHashes(insert(NS, NODE, member, h(1), h(2)));
                assertThat(prefixes(stub.queryPrefixBlocks(query(NS, h(1), h(2)))))
                        .isEqualTo(Map.of(NODE, 2));
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
