package io.pegaflow.metaserver.grpc;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static io.pegaflow.metaserver.grpc.Requests.prefixes;
import static io.pegaflow.metaserver.grpc.Requests.query;
import static io.pegaflow.metaserver.grpc.Requests.remove;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.pegaflow.edge.access.ClusterCredential;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.proto.UnregisterNodeRequest;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * With {@code pega.cluster.token}, every node write (HeartbeatNode, InsertBlockHashes, RemoveBlockHashes,
 * UnregisterNode) needs the servers' credential (decision 0031 §1): without it, or with another, the call is
 * UNAUTHENTICATED and changes nothing; with it the write goes through. QueryPrefixBlocks stays open. Without a token, a
 * metaserver bound off loopback logs one WARN line; on loopback it does not.
 */
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaServerClusterCredentialTest {
    static final String TOKEN = "metaserver-test-cluster-secret-01";
    static final String NS = "ns-cred";
    static final String NODE = "10.77.1.1:50055";

    @TempDir
    Path dir;

    private static MetaServerGrpc.MetaServerBlockingStub carrying(
            MetaServerGrpc.MetaServerBlockingStub stub, String token) {
        Metadata headers = new Metadata();
        headers.put(ClusterCredential.HEADER, token);
        return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
    }

    private static void assertUnauthenticated(Runnable call) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
            assertThat(e.getStatus().getDescription())
                    .contains("pega.cluster.token")
                    .doesNotContain(TOKEN);
        });
    }

    @Test
    void shouldRefuseEveryNodeWriteWithoutTheCredentialAndServeReads() {
        try (MetaserverTestApp app = MetaserverTestApp.start(
                dir, new AdjustableClock(), "--pega.cluster.token=" + TOKEN, "--logging.level.root=WARN")) {
            MetaServerGrpc.MetaServerBlockingStub plain = app.stub().withDeadlineAfter(30, TimeUnit.SECONDS);
            UUID id = UUID.randomUUID();
            for (MetaServerGrpc.MetaServerBlockingStub stranger : new MetaServerGrpc.MetaServerBlockingStub[] {
                plain, carrying(plain, TOKEN + "x"), carrying(plain, "")
            }) {
                assertUnauthenticated(() -> stranger.heartbeatNode(heartbeat(NODE, id)));
                assertUnauthenticated(() -> stranger.insertBlockHashes(insert(NS, NODE, id, h(1), h(2))));
                assertUnauthenticated(() -> stranger.removeBlockHashes(remove(NS, NODE, id, h(1))));
                assertUnauthenticated(() -> stranger.unregisterNode(UnregisterNodeRequest.newBuilder()
                        .setNode(NODE)
                        .setNodeId(id.toString())
                        .build()));
            }
            assertThat(plain.queryPrefixBlocks(query(NS, h(1), h(2))).getNodesCount())
                    .as("nothing a refused write sent was indexed")
                    .isZero();

            MetaServerGrpc.MetaServerBlockingStub member = carrying(plain, TOKEN);
            member.heartbeatNode(heartbeat(NODE, id));
            member.insertBlockHashes(insert(NS, NODE, id, h(1), h(2), h(3)));
            member.removeBlockHashes(remove(NS, NODE, id, h(3)));
            assertThat(prefixes(plain.queryPrefixBlocks(query(NS, h(1), h(2), h(3)))))
                    .as("a read needs no credential")
                    .isEqualTo(Map.of(NODE, 2));

            // the stranger cannot end the member's session either
            assertUnauthenticated(() -> plain.unregisterNode(UnregisterNodeRequest.newBuilder()
                    .setNode(NODE)
                    .setNodeId(id.toString())
                    .build()));
            assertThat(prefixes(plain.queryPrefixBlocks(query(NS, h(1))))).isEqualTo(Map.of(NODE, 1));
        }
    }

    @Test
    void shouldWarnOnceWhenBoundOffLoopbackWithoutACredential(CapturedOutput output) {
        try (MetaserverTestApp app =
                MetaserverTestApp.start(dir, new AdjustableClock(), "--spring.grpc.server.address=0.0.0.0:0")) {
            assertThat(output.getAll().lines().filter(l -> l.contains("No cluster credential")))
                    .singleElement()
                    .satisfies(line -> assertThat(line)
                            .contains("WARN")
                            .contains("0.0.0.0")
                            .contains("HeartbeatNode, InsertBlockHashes, RemoveBlockHashes, UnregisterNode"));
            // and without a credential, node writes work as in the reference
            UUID id = UUID.randomUUID();
            app.stub().withDeadlineAfter(30, TimeUnit.SECONDS).heartbeatNode(heartbeat(NODE, id));
        }
    }

    @Test
    void shouldNotWarnOnLoopbackOrWithACredential(CapturedOutput output) {
        try (MetaserverTestApp app = MetaserverTestApp.start(dir, new AdjustableClock())) {
            assertThat(app.grpcPort()).isPositive();
        }
        try (MetaserverTestApp app = MetaserverTestApp.start(
                dir,
                new AdjustableClock(),
                "--spring.grpc.server.address=0.0.0.0:0",
                "--pega.cluster.token=" + TOKEN)) {
            assertThat(app.grpcPort()).isPositive();
        }
        assertThat(output.getAll()).doesNotContain("No cluster credential").doesNotContain(TOKEN);
    }

    @Test
    void shouldTellLoopbackBindsApart() {
        assertThat(NodeWriteCredentialConfiguration.loopback("127.0.0.1")).isTrue();
        assertThat(NodeWriteCredentialConfiguration.loopback("::1")).isTrue();
        assertThat(NodeWriteCredentialConfiguration.loopback("localhost")).isTrue();
        assertThat(NodeWriteCredentialConfiguration.loopback("0.0.0.0")).isFalse();
        assertThat(NodeWriteCredentialConfiguration.loopback("*")).isFalse();
        assertThat(NodeWriteCredentialConfiguration.loopback("10.0.0.5")).isFalse();
        assertThat(NodeWriteCredentialConfiguration.loopback("meta.example")).isFalse();
    }
}
