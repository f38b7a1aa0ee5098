package io.pegaflow.core.instance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.plan.RangePlan;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A device lane: copies on its own named thread, a bounded queue, drain on stop, nothing silently dropped. */
@Timeout(30)
class DeviceLaneTest {
    private final List<String> log = new CopyOnWriteArrayList<>();

    private final DeviceCopier copier = new DeviceCopier() {
        @Override
        public void copyToHost(RangePlan plan) {
            log.add("toHost " + plan.totalBytes() + " on "
                    + Thread.currentThread().getName());
        }

        @Override
        public void copyToDevice(RangePlan plan) {
            if (plan.totalBytes() == 13) {
                throw EngineException.storage("batch copy failed: simulated");
            }
            log.add("toDevice " + plan.totalBytes());
        }

        @Override
        public void close() {}
    };

    private static RangePlan plan(long bytes) {
        RangePlan p = new RangePlan(1);
        p.add(1 << 20, 2 << 20, bytes);
        return p;
    }

    /** A job that records whether it ran or was abandoned. */
    private final class Recorded implements DeviceLane.Job {
        final String name;

        Recorded(String name) {
            this.name = name;
        }

        @Override
        public void run(DeviceCopier c) {
            log.add("ran " + name);
        }

        @Override
        public void abandon() {
            log.add("abandoned " + name);
        }
    }

    @Test
    void shouldCopyOnTheLaneThreadAndFinishQueuedCopiesBeforeStopping() throws Exception {
        AgentGroup agents = new AgentGroup();
        DeviceLane lane = new DeviceLane("pega-test-dev0-save", 0, DeviceLane.Direction.TO_HOST, copier);
        lane.start(agents);
        CompletableFuture<Void> a = lane.copy(plan(4096));
        CompletableFuture<Void> b = lane.copy(plan(8192));
        assertThat(lane.stop(TimeUnit.SECONDS.toNanos(10))).isTrue();
        a.get(1, TimeUnit.SECONDS);
        b.get(1, TimeUnit.SECONDS);
        assertThat(log).containsExactly("toHost 4096 on pega-test-dev0-save", "toHost 8192 on pega-test-dev0-save");
        assertThatThrownBy(() -> lane.copy(plan(1)))
                .isInstanceOf(EngineException.class)
                .hasMessage("device 0 is being unregistered");
    }

    @Test
    void shouldHandTheCopiersErrorToTheWaitingSave() throws Exception {
        DeviceLane lane = new DeviceLane("pega-test-dev0-load", 0, DeviceLane.Direction.TO_DEVICE, copier);
        lane.start(new AgentGroup());
        CompletableFuture<Void> failed = lane.copy(plan(13));
        CompletableFuture<Void> fine = lane.copy(plan(64));
        assertThatThrownBy(() -> failed.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasMessageContaining("simulated");
        fine.get(10, TimeUnit.SECONDS);
        assertThat(log).as("one failed copy does not stop the lane").containsExactly("toDevice 64");
        lane.stop(TimeUnit.SECONDS.toNanos(10));
    }

    @Test
    void shouldRefuseWorkBeyondItsQueueAndAbandonWhatNeverRan() {
        DeviceLane lane = new DeviceLane("pega-test-dev3-load", 3, DeviceLane.Direction.TO_DEVICE, copier);
        // Not started: nothing drains.
        for (int i = 0; i < DeviceLane.QUEUE_DEPTH - 1; i++) {
            lane.submit(new Recorded("job" + i));
        }
        CompletableFuture<Void> copy = lane.copy(plan(64));
        assertThatThrownBy(() -> lane.submit(new Recorded("one too many")))
                .isInstanceOf(EngineException.class)
                .hasMessage("device 3 load lane is full (1024 copies waiting)")
                .satisfies(e ->
                        assertThat(((EngineException) e).kind()).isEqualTo(EngineException.Kind.RESOURCE_EXHAUSTED));
        assertThat(lane.stop(TimeUnit.SECONDS.toNanos(10))).isTrue();
        assertThat(log)
                .hasSize(DeviceLane.QUEUE_DEPTH - 1)
                .allSatisfy(l -> assertThat(l).startsWith("abandoned job"));
        assertThat(copy).isCompletedExceptionally();
    }
}
