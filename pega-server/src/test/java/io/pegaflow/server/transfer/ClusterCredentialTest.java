package io.pegaflow.server.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.edge.access.ClusterCredential;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.proto.QueryBlocksForTransferRequest;
import io.pegaflow.proto.RdmaHandshakeRequest;
import io.pegaflow.proto.ReleaseTransferLockRequest;
import io.pegaflow.proto.ext.push.LayerArrivedRequest;
import io.pegaflow.proto.ext.push.PdPushGrpc;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.TransferEngine;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;

/**
 * With {@code pega.cluster.token}, the RPCs servers make to each other need the credential (the probe's TR-02/TR-03
 * and the push's server-to-server calls): without it each is UNAUTHENTICATED before the service sees it, so a
 * well-formed descriptor carrying garbage UCX worker addresses, which aborted the process inside UCX, never reaches UCX,
 * and the server stays healthy; with it the call goes through to the usual validation.
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
            "pega.pd.enabled=true",
            "pega.pd.transports=tcp",
            "pega.cluster.token=" + ClusterCredentialTest.TOKEN
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClusterCredentialTest {
    static final String TOKEN = "credential-test-cluster-secret-0001";
    static final String HOST = "127.0.0.1";

    @Autowired
    GrpcPort port;

    @Autowired
    TransferEngine owner;

    /** The server's own descriptor with random bytes for every lane's UCX worker address (CRC recomputed). */
    private HandshakeDescriptor garbageWorkers() {
        HandshakeDescriptor real = owner.localDescriptor();
        SecureRandom random = new SecureRandom();
        List<byte[]> lanes = new ArrayList<>();
        for (byte[] lane : real.laneAddresses()) {
            byte[] junk = new byte[lane.length];
            random.nextBytes(junk);
            lanes.add(junk);
        }
        return new HandshakeDescriptor(real.fabric(), real.instanceId() + 1, lanes, real.nicCount(), real.regions());
    }

    private static void assertUnauthenticated(Runnable call) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
            assertThat(e.getStatus().getDescription())
                    .contains("is for servers of this cluster")
                    .doesNotContain(TOKEN);
        });
    }

    @Test
    void shouldRefuseTheServerToServerRpcsWithoutTheCredential() {
        try (MockScheduler s = MockScheduler.connect(HOST, port.port())) {
            EngineGrpc.EngineBlockingStub stub = s.stub().withDeadlineAfter(20, TimeUnit.SECONDS);
            RdmaHandshakeRequest garbage = RdmaHandshakeRequest.newBuilder()
                    .setRequesterId("10.9.9.9:1")
                    .setHandshakeMetadata(ByteString.copyFrom(garbageWorkers().encode()))
                    .build();
            assertUnauthenticated(() -> stub.rdmaHandshake(garbage));
            assertUnauthenticated(() -> stub.queryBlocksForTransfer(QueryBlocksForTransferRequest.newBuilder()
                    .setNamespace("ns")
                    .addBlockHashes(ByteString.copyFromUtf8("h"))
                    .setRequesterId("10.9.9.9:1")
                    .build()));
            assertUnauthenticated(() -> stub.releaseTransferLock(ReleaseTransferLockRequest.newBuilder()
                    .setTransferSessionId("any")
                    .build()));
            PdPushGrpc.PdPushBlockingStub push =
                    PdPushGrpc.newBlockingStub(s.channel()).withDeadlineAfter(20, TimeUnit.SECONDS);
            assertUnauthenticated(() -> push.layerArrived(
                    LayerArrivedRequest.newBuilder().setReceiveId(7).build()));

            // a wrong credential is no credential
            EngineGrpc.EngineBlockingStub wrong = stub.withInterceptors(
                    ClusterCredential.of("another-secret-of-the-same-size!!").attach());
            assertUnauthenticated(() -> wrong.rdmaHandshake(garbage));

            assertThat(stub.health(HealthRequest.getDefaultInstance())
                            .getStatus()
                            .getOk())
                    .as("alive and healthy after every refusal")
                    .isTrue();
        }
    }

    @Test
    void shouldLetTheCredentialThroughToTheUsualValidation() {
        try (MockScheduler s = MockScheduler.connect(HOST, port.port())) {
            EngineGrpc.EngineBlockingStub stub = s.stub()
                    .withDeadlineAfter(20, TimeUnit.SECONDS)
                    .withInterceptors(ClusterCredential.of(TOKEN).attach());
            assertThatThrownBy(() -> stub.rdmaHandshake(RdmaHandshakeRequest.newBuilder()
                            .setRequesterId("10.9.9.9:1")
                            .setHandshakeMetadata(ByteString.copyFrom(new byte[] {1, 2, 3}))
                            .build()))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
            assertThat(stub.releaseTransferLock(ReleaseTransferLockRequest.newBuilder()
                                    .setTransferSessionId("never-granted")
                                    .build())
                            .getReleasedBlocks())
                    .isZero();
        }
    }
}
