package io.pegaflow.metaserver.grpc;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static io.pegaflow.metaserver.grpc.Requests.query;
import static io.pegaflow.metaserver.grpc.Requests.remove;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.proto.HeartbeatNodeRequest;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.proto.UnregisterNodeRequest;
import io.pegaflow.testkit.ProcessResources;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nothing accumulates per node session (decision 0016 §2): hundreds of clients, each on its own connection, register,
 * announce, query, fail in every way the protocol refuses (bad arguments, an unknown session, a live address taken by
 * another id) and unregister; afterwards the process holds no more file descriptors or threads than after the warm-up.
 */
@Tag("integration")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MetaServerLeakTest {
    private static final int WARM_UP_ROUNDS = 20;
    private static final int ROUNDS = 150;
    /** Threads an idle pool keeps or retires late, descriptors of a connection still closing. */
    private static final int SLACK = 8;

    @TempDir
    Path dir;

    @Test
    void shouldHoldNoMoreDescriptorsOrThreadsAfterManySessionsAndFailures() throws InterruptedException {
        ProcessResources resources = new ProcessResources("");
        try (MetaserverTestApp app = MetaserverTestApp.start(dir, new AdjustableClock(), "--logging.level.root=WARN")) {
            for (int i = 0; i < WARM_UP_ROUNDS; i++) {
                oneClient(app, i);
            }
            ProcessResources.Snapshot baseline = resources.snapshot();
            for (int i = WARM_UP_ROUNDS; i < WARM_UP_ROUNDS + ROUNDS; i++) {
                oneClient(app, i);
            }
            ProcessResources.Snapshot after = resources.awaitNoGrowth(baseline, SLACK, Duration.ofSeconds(30));
            assertThat(after.fds()).isLessThanOrEqualTo(baseline.fds() + SLACK);
        }
    }

    /** One node's whole life on its own connection, with every kind of refusal in it. */
    private static void oneClient(MetaserverTestApp app, int n) throws InterruptedException {
        ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", app.grpcPort())
                .usePlaintext()
                .build();
        try {
            MetaServerGrpc.MetaServerBlockingStub stub =
                    MetaServerGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
            String node = "10.88." + (n / 250) + "." + (n % 250 + 1) + ":50055";
            UUID id = UUID.randomUUID();
            stub.heartbeatNode(heartbeat(node, id));
            assertThat(stub.insertBlockHashes(insert("ns", node, id, h(n), h(n + 1)))
                            .getInsertedCount())
                    .isEqualTo(2);
            assertThat(stub.queryPrefixBlocks(query("ns", h(n))).getNodesCount())
                    .isPositive();
            refused(
                    Status.Code.INVALID_ARGUMENT,
                    () -> stub.heartbeatNode(HeartbeatNodeRequest.newBuilder()
                            .setNode("no port")
                            .setNodeId(id.toString())
                            .build()));
            refused(Status.Code.FAILED_PRECONDITION, () -> stub.heartbeatNode(heartbeat(node, UUID.randomUUID())));
            refused(
                    Status.Code.FAILED_PRECONDITION,
                    () -> stub.insertBlockHashes(insert("ns", "10.99.0.1:1", UUID.randomUUID(), h(n))));
            stub.removeBlockHashes(remove("ns", node, id, h(n)));
            assertThat(stub.unregisterNode(UnregisterNodeRequest.newBuilder()
                                    .setNode(node)
                                    .setNodeId(id.toString())
                                    .build())
                            .getRemovedOwners())
                    .isEqualTo(1);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static void refused(Status.Code code, Runnable call) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, call::run);
        assertThat(e).as("expected %s", code).isNotNull();
        assertThat(e.getStatus().getCode()).isEqualTo(code);
    }
}
