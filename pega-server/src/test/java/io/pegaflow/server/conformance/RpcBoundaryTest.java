package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.pegaflow.proto.HealthResponse;
import io.pegaflow.proto.QueryBlocksForTransferRequest;
import io.pegaflow.proto.QueryRequest;
import io.pegaflow.proto.RdmaHandshakeRequest;
import io.pegaflow.proto.ReleaseRequest;
import io.pegaflow.proto.ReleaseTransferLockRequest;
import io.pegaflow.proto.UnregisterRequest;
import io.pegaflow.proto.UnregisterResponse;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.SessionHandle;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The remaining RPC-boundary rules: Release and Query validation, Session, Unregister, Health and the P2P RPCs that are
 * stubs without a transfer engine.
 */
@Timeout(120)
class RpcBoundaryTest extends ConformanceSupport {
    private static final String RDMA_OFF = "RDMA transfer engine is not configured";

    private static ReleaseRequest release(ByteString lease) {
        return ReleaseRequest.newBuilder().setLease(lease).build();
    }

    @Test
    void shouldRejectReleaseOfEmptyLease() {
        assertStatus(
                () -> scheduler.stub().release(release(ByteString.EMPTY)),
                Status.Code.INVALID_ARGUMENT,
                "query lease id must be non-empty");
    }

    @Test
    void shouldRejectReleaseOfLeaseThatIsNot16Bytes() {
        assertStatus(
                () -> scheduler.stub().release(release(ByteString.copyFrom(new byte[15]))),
                Status.Code.INVALID_ARGUMENT,
                "query lease id must be 16 bytes, got 15");
        assertStatus(
                () -> scheduler.stub().release(release(ByteString.copyFrom(new byte[32]))),
                Status.Code.INVALID_ARGUMENT,
                "query lease id must be 16 bytes, got 32");
    }

    @Test
    void shouldRejectReleaseOfUnknownLease() {
        assertStatus(
                () -> scheduler.stub().release(release(unknownLease())),
                Status.Code.FAILED_PRECONDITION,
                "query lease is unknown or expired");
    }

    @Test
    void shouldCheckReqIdBeforeTheInstance() {
        QueryRequest request = QueryRequest.newBuilder()
                .setInstanceId("nobody")
                .addBlockHashes(BlockPattern.hash(1, 0))
                .build();

        assertStatus(
                () -> scheduler.stub().queryPrefetch(request),
                Status.Code.INVALID_ARGUMENT,
                "req_id must not be empty");
    }

    @Test
    void shouldRejectQueryForUnknownInstance() {
        assertStatus(
                () -> scheduler.query("nobody", BlockPattern.hashes(1, 2), "r"),
                Status.Code.FAILED_PRECONDITION,
                "instance nobody not found");
    }

    @Test
    void shouldRejectSessionWithoutInstanceId() {
        SessionHandle session = scheduler.openSession("", "ns", 1, 1);

        Optional<Status> closed = session.awaitClosed(WAIT);

        assertThat(closed).isPresent();
        assertThat(closed.get().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(closed.get().getDescription()).isEqualTo("instance_id must not be empty");
        // Sessions of earlier tests may still be closing; a rejected one must not stay installed.
        await().atMost(WAIT).until(() -> engine.status().sessionCount() == 0);
    }

    @Test
    void shouldKeepSessionStreamOpenAndSilent() {
        SessionHandle session = scheduler.openSession("silent", "ns", 2, 2);

        assertThat(session.awaitHeaders(WAIT)).isTrue();
        assertThat(session.awaitClosed(Duration.ofMillis(300))).isEmpty();
        assertThat(session.isOpen()).isTrue();
        assertThat(session.eventsReceived()).isZero();
        session.close();
    }

    @Test
    void shouldIgnoreCloseOfASupersededSession() {
        String id = "superseded";
        try (MockVllmWorker w = refWorker(id).build()) {
            SessionHandle old = scheduler.openSession(id, "ns", 1, 1);
            assertThat(old.awaitHeaders(WAIT)).isTrue();
            SessionHandle current = scheduler.openSession(id, "ns", 1, 1);
            assertThat(current.awaitHeaders(WAIT)).isTrue();
            w.register();

            old.close();
            assertThat(old.awaitClosed(WAIT)).isPresent();
            // The old stream's end is a no-op: the instance stays registered while the server handles the cancel.
            await().during(Duration.ofMillis(500))
                    .atMost(Duration.ofSeconds(3))
                    .until(() -> engine.instanceIds().contains(id));
            assertThat(scheduler.query(id, BlockPattern.hashes(2, 1), "alive").hasReady())
                    .isTrue();
            assertThat(engine.instanceIds()).contains(id);

            current.close();
            Status gone = scheduler.awaitQueryFailure(id, BlockPattern.hashes(2, 1), WAIT);
            assertThat(gone.getDescription()).isEqualTo("instance " + id + " not found");
            await().atMost(WAIT).until(() -> engine.status().sessionCount() == 0);
        }
    }

    @Test
    void shouldAnswerUnregisterWithOkStatusThenFailTheSecondTime() {
        try (MockVllmWorker w = refWorker("unregister-twice").build()) {
            w.register();

            UnregisterResponse first = w.unregister();

            assertThat(first.getStatus().getOk()).isTrue();
            assertThat(first.getStatus().getMessage()).isEmpty();
            assertStatus(w::unregister, Status.Code.FAILED_PRECONDITION, "instance unregister-twice not found");
            assertStatus(
                    () -> w.save(blockIds(4), BlockPattern.hashes(3, 4)),
                    Status.Code.FAILED_PRECONDITION,
                    "instance unregister-twice not found");
        }
    }

    @Test
    void shouldRejectUnregisterOfUnknownInstance() {
        assertStatus(
                () -> scheduler
                        .stub()
                        .unregisterContext(UnregisterRequest.newBuilder()
                                .setInstanceId("never")
                                .build()),
                Status.Code.FAILED_PRECONDITION,
                "instance never not found");
    }

    @Test
    void shouldAnswerHealthWithOkStatus() {
        HealthResponse health = scheduler.health();

        assertThat(health.hasStatus()).isTrue();
        assertThat(health.getStatus().getOk()).isTrue();
        assertThat(health.getStatus().getMessage()).isEmpty();
    }

    @Test
    void shouldRefuseQueryBlocksForTransferWithoutTransferEngine() {
        assertStatus(
                () -> scheduler
                        .stub()
                        .queryBlocksForTransfer(QueryBlocksForTransferRequest.newBuilder()
                                .setNamespace("ns")
                                .addBlockHashes(BlockPattern.hash(4, 0))
                                .setRequesterId("peer")
                                .build()),
                Status.Code.FAILED_PRECONDITION,
                RDMA_OFF);
    }

    @Test
    void shouldRefuseReleaseTransferLockWithoutTransferEngine() {
        assertStatus(
                () -> scheduler
                        .stub()
                        .releaseTransferLock(ReleaseTransferLockRequest.newBuilder()
                                .setTransferSessionId("00000000-0000-4000-8000-000000000000")
                                .build()),
                Status.Code.FAILED_PRECONDITION,
                RDMA_OFF);
    }

    @Test
    void shouldRefuseRdmaHandshakeWithoutTransferEngine() {
        assertStatus(
                () -> scheduler
                        .stub()
                        .rdmaHandshake(RdmaHandshakeRequest.newBuilder()
                                .setRequesterId("peer")
                                .build()),
                Status.Code.FAILED_PRECONDITION,
                RDMA_OFF);
    }
}
