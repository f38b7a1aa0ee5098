package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.QueryRequest;
import io.pegaflow.proto.ReleaseRequest;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.LoadResult;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ReferenceHarness;
import io.pegaflow.testkit.SessionHandle;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The reference's mock-vLLM end-to-end scenarios ({@code pegaflow-server/tests} of novitalabs/pegaflow v0.22.4) over
 * real gRPC.
 */
@Timeout(120)
class ReferenceScenariosTest extends ServerTestBase {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final BlockPattern REF = BlockPattern.uniform(0);

    private MockVllmWorker worker(String instanceId) {
        return ReferenceHarness.worker(HOST, port()).instanceId(instanceId).build();
    }

    private QueryReady awaitHits(String instanceId, List<ByteString> hashes, long expected) {
        scheduler.awaitHits(instanceId, hashes, expected, WAIT);
        return scheduler.queryUntilReady(instanceId, hashes, "req", WAIT);
    }

    @Test
    void shouldRoundTripSaveQueryLoad() {
        try (MockVllmWorker w = worker(ReferenceHarness.INSTANCE_ID)) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(17, 4);
            QueryReady cold = scheduler.queryUntilReady(w.instanceId(), hashes, "cold", WAIT);
            assertThat(cold.getNumHitBlocks()).isZero();
            assertThat(cold.getLease().isEmpty()).isTrue();

            w.fillBlocks(blockIds(4), REF);
            assertThat(w.save(blockIds(4), hashes).getStatus().getOk()).isTrue();
            assertThat(w.save(blockIds(4), hashes).getStatus().getMessage()).isEmpty();
            QueryReady hit = awaitHits(w.instanceId(), hashes, 4);
            assertThat(hit.getNumHitBlocks()).isEqualTo(4);
            assertThat(hit.getLease().size()).isEqualTo(16);

            w.zeroBlocks(blockIds(4));
            LoadResult load = w.load(hit.getLease(), blockIds(4));
            assertThat(load.rpcOk()).isTrue();
            assertThat(load.shmState()).isEqualTo(1);
            w.verifyBlocks(blockIds(4), REF);
        }
    }

    @Test
    void shouldRejectEmptyReqId() {
        try (MockVllmWorker w = worker(ReferenceHarness.INSTANCE_ID)) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(31, 4);
            w.fillBlocks(blockIds(4), REF);
            w.save(blockIds(4), hashes);
            assertThatThrownBy(() -> scheduler
                            .stub()
                            .queryPrefetch(QueryRequest.newBuilder()
                                    .setInstanceId(w.instanceId())
                                    .addAllBlockHashes(hashes)
                                    .setReqId("")
                                    .build()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).isEqualTo("req_id must not be empty");
                    });
        }
    }

    @Test
    void shouldBindLeaseToInstance() {
        try (MockVllmWorker first = worker(ReferenceHarness.INSTANCE_ID);
                MockVllmWorker second = worker(ReferenceHarness.SECOND_INSTANCE_ID)) {
            first.register();
            List<ByteString> hashes = BlockPattern.hashes(37, 4);
            first.fillBlocks(blockIds(4), REF);
            first.save(blockIds(4), hashes);
            QueryReady ready = awaitHits(first.instanceId(), hashes, 4);
            second.register();
            LoadResult load = second.load(ready.getLease(), blockIds(4));
            assertThat(load.rpcOk()).isFalse();
            assertThat(load.message()).contains("query lease belongs to instance");
            assertThat(load.shmState()).isNegative();
            // The lease was not consumed: its owner can still load it.
            assertThat(first.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
        }
    }

    @Test
    void shouldFailSecondReleaseOfSameLease() {
        try (MockVllmWorker w = worker(ReferenceHarness.INSTANCE_ID)) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(41, 4);
            w.fillBlocks(blockIds(4), REF);
            w.save(blockIds(4), hashes);
            QueryReady ready = awaitHits(w.instanceId(), hashes, 4);
            scheduler.release(ready.getLease());
            assertThatThrownBy(() -> scheduler.release(ready.getLease()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                        assertThat(e.getStatus().getDescription()).contains("query lease is unknown or expired");
                    });
        }
    }

    @Test
    void shouldReturnPrefixLeaseForPartialHit() {
        try (MockVllmWorker w = worker(ReferenceHarness.INSTANCE_ID)) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(43, 4);
            w.fillBlocks(blockIds(4), REF);
            w.save(blockIds(2), hashes.subList(0, 2));
            scheduler.awaitHits(w.instanceId(), hashes.subList(0, 2), 2, WAIT);
            QueryReady ready = scheduler.queryUntilReady(w.instanceId(), hashes, "partial", WAIT);
            assertThat(ready.getNumHitBlocks()).isEqualTo(2);
            w.zeroBlocks(blockIds(4));
            assertThat(w.load(ready.getLease(), blockIds(2)).succeeded()).isTrue();
            w.verifyBlocks(blockIds(2), REF);
            w.verifyZeroed(blockIds(2, 4));
        }
    }

    @Test
    void shouldRejectLeaseBlockCountMismatch() {
        try (MockVllmWorker w = worker(ReferenceHarness.INSTANCE_ID)) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(47, 4);
            w.fillBlocks(blockIds(4), REF);
            w.save(blockIds(2), hashes.subList(0, 2));
            scheduler.awaitHits(w.instanceId(), hashes.subList(0, 2), 2, WAIT);
            QueryReady ready = scheduler.queryUntilReady(w.instanceId(), hashes, "mismatch", WAIT);
            LoadResult load = w.load(ready.getLease(), blockIds(4));
            assertThat(load.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(load.message()).contains("query lease block count 2 does not match destination block count 4");
            assertThat(load.shmState()).isNegative();
        }
    }

    @Test
    void shouldCleanUpInstanceWhenSessionDisconnects() {
        try (MockVllmWorker w = worker(ReferenceHarness.INSTANCE_ID)) {
            SessionHandle session = scheduler.openSession(w.instanceId(), ReferenceHarness.NAMESPACE, 1, 1);
            assertThat(session.awaitHeaders(WAIT)).isTrue();
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(53, 4);
            w.fillBlocks(blockIds(4), REF);
            w.save(blockIds(4), hashes);
            QueryReady ready = awaitHits(w.instanceId(), hashes, 4);
            session.close();
            Status failure = scheduler.awaitQueryFailure(w.instanceId(), hashes, WAIT);
            assertThat(failure.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
            assertThat(failure.getDescription()).contains("instance mock-vllm-rpc-e2e not found");
            assertThatThrownBy(() -> w.save(blockIds(4), hashes))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getDescription())
                                    .contains("instance mock-vllm-rpc-e2e not found"));
            LoadResult load = w.load(ready.getLease(), blockIds(4));
            assertThat(load.code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
            assertThat(load.message()).contains("instance mock-vllm-rpc-e2e not found");
            assertThat(load.shmState()).isNegative();
        }
    }

    @Test
    void shouldLoadTp2OnTwoDevicesWithWorldSizeConsumption() {
        String id = "tp2-instance";
        try (MockVllmWorker tp0 = ReferenceHarness.worker(HOST, port())
                        .instanceId(id)
                        .tp(0, 2)
                        .worldSize(2)
                        .deviceId(0)
                        .build();
                MockVllmWorker tp1 = ReferenceHarness.worker(HOST, port())
                        .instanceId(id)
                        .tp(1, 2)
                        .worldSize(2)
                        .deviceId(1)
                        .build()) {
            tp0.register();
            tp1.register();
            List<ByteString> hashes = BlockPattern.hashes(59, 4);
            tp0.fillBlocks(blockIds(4), 59);
            tp1.fillBlocks(blockIds(4), 59);
            tp0.save(blockIds(4), hashes);
            engine.flushSeals();
            QueryReady half = scheduler.queryUntilReady(id, hashes, "tp2", WAIT);
            assertThat(half.getNumHitBlocks()).isZero();
            assertThat(half.getLease().isEmpty()).isTrue();
            tp1.save(blockIds(4), hashes);
            QueryReady ready = awaitHits(id, hashes, 4);
            tp0.zeroBlocks(blockIds(4));
            tp1.zeroBlocks(blockIds(4));
            assertThat(tp0.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            assertThat(tp1.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            tp0.verifyBlocks(blockIds(4), 59);
            tp1.verifyBlocks(blockIds(4), 59);
            LoadResult third = tp0.load(ready.getLease(), blockIds(4));
            assertThat(third.message()).contains("query lease is unknown or expired");
            assertThat(third.shmState()).isNegative();
        }
    }

    @Test
    void shouldAnswerFreshServerQueriesWithZeroHits() {
        try (MockVllmWorker w = worker("fresh")) {
            w.register();
            QueryReady empty = scheduler.queryUntilReady(w.instanceId(), List.of(), "empty", WAIT);
            assertThat(empty.getNumHitBlocks()).isZero();
            assertThat(empty.getLease().isEmpty()).isTrue();
            QueryReady unknown = scheduler.queryUntilReady(w.instanceId(), BlockPattern.hashes(99, 5), "u", WAIT);
            assertThat(unknown.getNumHitBlocks()).isZero();
            assertThat(unknown.getLease().isEmpty()).isTrue();
            await().atMost(WAIT).until(() -> engine.activeLeases() == 0);
            assertThatThrownBy(() -> scheduler
                            .stub()
                            .release(ReleaseRequest.newBuilder()
                                    .setLease(ByteString.copyFrom(new byte[3]))
                                    .build()))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getDescription())
                                    .isEqualTo("query lease id must be 16 bytes, got 3"));
        }
    }
}
