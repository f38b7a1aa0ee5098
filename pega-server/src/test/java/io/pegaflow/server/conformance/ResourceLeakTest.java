package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.RegisterContextRequest;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ProcessResources;
import io.pegaflow.testkit.ReferenceHarness;
import io.pegaflow.testkit.SessionHandle;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Nothing accumulates per instance (decision 0016 §2; decision 0011, defect 4): instance after instance, each on its
 * own connections and devices, opens a Session, registers, saves, loads byte for byte, is refused in the ways a clumsy
 * client gets refused, and goes away — by Unregister or by its Session closing. Afterwards the process (server and
 * clients, one JVM) holds no more file descriptors, threads or {@code /dev/shm} objects than after the warm-up, and the
 * engine no mapping, lease or pool allocation.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ResourceLeakTest extends ServerTestBase {
    private static final int WARM_UP_ROUNDS = 6;
    private static final int ROUNDS = 40;
    private static final int SLACK = 8;

    @Test
    void shouldHoldNothingMoreAfterManyInstancesAndFailures() {
        ProcessResources resources = new ProcessResources("pega_");
        for (int i = 0; i < WARM_UP_ROUNDS; i++) {
            oneInstance(i);
        }
        engine.flushSeals();
        ProcessResources.Snapshot baseline = resources.snapshot();
        for (int i = WARM_UP_ROUNDS; i < WARM_UP_ROUNDS + ROUNDS; i++) {
            oneInstance(i);
        }
        engine.cleanupInstances(null);
        engine.flushSeals();
        ProcessResources.Snapshot after = resources.awaitNoGrowth(baseline, SLACK, Duration.ofSeconds(30));
        assertThat(after.shmObjects()).isLessThanOrEqualTo(baseline.shmObjects());
        assertThat(engine.instanceIds()).isEmpty();
        assertThat(engine.mappedObjectCount()).isZero();
    }

    /** One instance's whole life; the even ones end by Unregister, the odd ones by closing their Session. */
    private void oneInstance(int n) {
        String id = "leak-" + n;
        BlockPattern pattern = BlockPattern.perByte(n);
        List<ByteString> hashes = BlockPattern.hashes(10_000 + n, 4);
        try (MockScheduler sched = MockScheduler.connect(HOST, port());
                SessionHandle session = sched.openSession(id, "ns", 1, 1);
                MockVllmWorker worker = ReferenceHarness.worker(HOST, port())
                        .instanceId(id)
                        .deviceId(n % 3)
                        .build()) {
            assertThat(session.awaitHeaders(Duration.ofSeconds(10))).isTrue();
            worker.register();
            worker.fillBlocks(blockIds(4), pattern);
            worker.save(blockIds(4), hashes);
            sched.awaitHits(id, hashes, 4, Duration.ofSeconds(10));

            // refusals: a registration that makes no sense, a Save naming a layer that is not registered
            RegisterContextRequest bad =
                    worker.registerRequest().toBuilder().setTpSize(0).build();
            refused(() -> worker.stub().registerContextBatch(bad));
            refused(() -> worker.stub()
                    .save(worker.saveRequest(blockIds(1), hashes.subList(0, 1)).toBuilder()
                            .setSaves(
                                    0,
                                    worker.saveRequest(blockIds(1), hashes.subList(0, 1)).getSaves(0).toBuilder()
                                            .setLayerName("no-such-layer"))
                            .build()));

            worker.zeroBlocks(blockIds(4));
            var ready = sched.queryUntilReady(id, hashes, "r" + n, Duration.ofSeconds(10));
            assertThat(ready.getNumHitBlocks()).isEqualTo(4);
            assertThat(worker.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            worker.verifyBlocks(blockIds(4), pattern);
            if (n % 2 == 0) {
                worker.unregister();
            }
        }
        if (n % 2 == 1) {
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> !engine.instanceIds().contains(id));
        }
    }

    private static void refused(Runnable call) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, call::run);
        assertThat(e).as("expected a refusal").isNotNull();
        assertThat(e.getStatus().getCode()).isIn(Status.Code.INVALID_ARGUMENT, Status.Code.FAILED_PRECONDITION);
    }
}
