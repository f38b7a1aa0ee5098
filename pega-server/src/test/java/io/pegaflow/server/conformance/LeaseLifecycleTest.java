package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.LoadResult;
import io.pegaflow.testkit.MockVllmWorker;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Query leases over real gRPC: world_size consumption, release, instance teardown. Expiry by TTL needs an injected
 * clock and is covered in pega-core ({@code PegaEngineLeaseTest}).
 */
@Timeout(120)
class LeaseLifecycleTest extends ConformanceSupport {
    private static final String ID = "leases";
    private static final BlockPattern PATTERN = BlockPattern.perByte(21);

    private QueryReady savedLease(MockVllmWorker w, int salt, String reqId) {
        List<ByteString> hashes = BlockPattern.hashes(salt, 4);
        w.fillBlocks(blockIds(4), PATTERN);
        w.save(blockIds(4), hashes);
        return awaitReady(w.instanceId(), hashes, 4, reqId);
    }

    private static void assertUnknownLease(LoadResult r) {
        assertThat(r.code()).isEqualTo(Status.Code.INTERNAL);
        assertThat(r.message()).isEqualTo("storage error: query lease is unknown or expired");
        assertThat(r.shmState()).isNegative();
    }

    @Test
    void shouldAllowWorldSizeLoadsThenFail() {
        try (MockVllmWorker w = refWorker(ID).worldSize(2).build()) {
            w.register();
            QueryReady ready = savedLease(w, 100, "world2");

            w.zeroBlocks(blockIds(4));
            assertThat(w.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            w.verifyBlocks(blockIds(4), PATTERN);
            assertThat(engine.activeLeases()).as("one share left").isEqualTo(1);
            w.zeroBlocks(blockIds(4));
            assertThat(w.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            w.verifyBlocks(blockIds(4), PATTERN);

            assertUnknownLease(w.load(ready.getLease(), blockIds(4)));
            assertThat(engine.activeLeases()).isZero();
        }
    }

    @Test
    void shouldRejectLoadAfterQueryAndRelease() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            QueryReady ready = savedLease(w, 101, "released");

            scheduler.release(ready.getLease());
            w.zeroBlocks(blockIds(4));

            assertUnknownLease(w.load(ready.getLease(), blockIds(4)));
            w.verifyZeroed(blockIds(4));
        }
    }

    @Test
    void shouldReleaseLeaseWithSharesLeft() {
        try (MockVllmWorker w = refWorker(ID).worldSize(3).build()) {
            w.register();
            QueryReady ready = savedLease(w, 102, "shares-left");
            assertThat(w.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();

            scheduler.release(ready.getLease());

            assertThat(engine.activeLeases()).isZero();
            assertUnknownLease(w.load(ready.getLease(), blockIds(4)));
        }
    }

    @Test
    void shouldGiveEachQueryItsOwnLease() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            QueryReady first = savedLease(w, 103, "same-req");
            QueryReady second = scheduler.queryUntilReady(ID, BlockPattern.hashes(103, 4), "same-req", WAIT);

            assertThat(second.getLease()).isNotEqualTo(first.getLease());
            assertThat(engine.activeLeases()).isEqualTo(2);
            assertThat(w.load(first.getLease(), blockIds(4)).succeeded()).isTrue();
            assertThat(w.load(second.getLease(), blockIds(4)).succeeded()).isTrue();
        }
    }

    @Test
    void shouldDropLeasesWhenTheInstanceUnregisters() {
        try (MockVllmWorker w = refWorker(ID).build();
                MockVllmWorker other = refWorker("bystander").build()) {
            w.register();
            other.register();
            QueryReady mine = savedLease(w, 104, "mine");
            QueryReady theirs = scheduler.queryUntilReady("bystander", BlockPattern.hashes(104, 4), "theirs", WAIT);
            assertThat(theirs.getNumHitBlocks()).as("same namespace").isEqualTo(4);

            w.unregister();

            assertThat(engine.activeLeases()).as("the bystander's lease only").isEqualTo(1);
            assertThat(statusOf(() -> scheduler.release(mine.getLease())).getDescription())
                    .isEqualTo("query lease is unknown or expired");
            other.zeroBlocks(blockIds(4));
            assertThat(other.load(theirs.getLease(), blockIds(4)).succeeded()).isTrue();
            other.verifyBlocks(blockIds(4), PATTERN);
        }
    }

    @Test
    void shouldFailEverythingForTheInstanceAfterUnregister() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            QueryReady ready = savedLease(w, 105, "before");

            w.unregister();

            String gone = "instance " + ID + " not found";
            assertStatus(() -> w.save(blockIds(4), BlockPattern.hashes(105, 4)), Status.Code.FAILED_PRECONDITION, gone);
            assertStatus(w::unregister, Status.Code.FAILED_PRECONDITION, gone);
            assertStatus(
                    () -> scheduler.query(ID, BlockPattern.hashes(105, 4), "after"),
                    Status.Code.FAILED_PRECONDITION,
                    gone);
            LoadResult load = w.load(ready.getLease(), blockIds(4));
            assertThat(load.code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
            assertThat(load.message()).isEqualTo(gone);
            assertThat(load.shmState()).isNegative();
            assertThat(mappingsOf(shmOf(w))).as("server mapping closed").isEqualTo(1);
        }
    }

    @Test
    void shouldKeepBlocksCachedAcrossInstanceLifetimes() {
        try (MockVllmWorker w = refWorker(ID).build();
                MockVllmWorker next = refWorker(ID).build()) {
            w.register();
            scheduler.release(savedLease(w, 106, "first-life").getLease());
            w.unregister();

            next.register();
            QueryReady ready = scheduler.queryUntilReady(ID, BlockPattern.hashes(106, 4), "second-life", WAIT);

            assertThat(ready.getNumHitBlocks()).isEqualTo(4);
            assertThat(next.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            next.verifyBlocks(blockIds(4), PATTERN);
        }
    }

    @Test
    void shouldDropLeasesWhenTheSessionEnds() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            var session = scheduler.openSession(ID, "mock-vllm", 1, 1);
            assertThat(session.awaitHeaders(WAIT)).isTrue();
            w.register();
            savedLease(w, 107, "session");
            assertThat(engine.activeLeases()).isEqualTo(1);

            session.close();

            await().atMost(WAIT)
                    .until(() ->
                            engine.activeLeases() == 0 && engine.instanceIds().isEmpty());
        }
    }
}
