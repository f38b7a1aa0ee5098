package io.pegaflow.kernel.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Worker agents instead of a thread pool: bounded, every job run or abandoned exactly once. */
@Timeout(30)
class TaskAgentsTest {

    @Test
    void shouldRunJobsOnNamedWorkersAndReportThem() throws InterruptedException {
        AgentGroup group = new AgentGroup();
        TaskAgents workers = new TaskAgents("pega-test-work", 2, 8, NanoClock.SYSTEM).start(group);
        Set<String> threads = ConcurrentHashMap.newKeySet();
        CountDownLatch done = new CountDownLatch(4);
        for (int i = 0; i < 4; i++) {
            assertThat(workers.submit(new TaskAgents.Job(
                            "job",
                            () -> {
                                threads.add(Thread.currentThread().getName());
                                done.countDown();
                            },
                            () -> {})))
                    .isEqualTo(CommandQueue.Offer.ACCEPTED);
        }
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(threads).allMatch(t -> t.startsWith("pega-test-work-"));
        assertThat(group.statuses())
                .extracting(AgentGroup.Status::roleName)
                .containsExactlyInAnyOrder("pega-test-work-0", "pega-test-work-1");
        assertThat(workers.close(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void shouldRefuseWhenFullAndAbandonWhatNoWorkerRan() {
        // never started: nothing drains, so the queue fills and close() must abandon every queued job once
        TaskAgents workers = new TaskAgents("pega-test-idle", 1, 2, NanoClock.SYSTEM);
        List<String> ends = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 2; i++) {
            int n = i;
            assertThat(workers.submit(new TaskAgents.Job("j", () -> ends.add("ran" + n), () -> ends.add("gone" + n))))
                    .isEqualTo(CommandQueue.Offer.ACCEPTED);
        }
        assertThat(workers.submit(new TaskAgents.Job("j", () -> {}, () -> {}))).isEqualTo(CommandQueue.Offer.FULL);
        workers.close(1, TimeUnit.SECONDS);
        assertThat(ends).containsExactly("gone0", "gone1");
        assertThat(workers.submit(new TaskAgents.Job("j", () -> {}, () -> {}))).isEqualTo(CommandQueue.Offer.CLOSED);
    }

    @Test
    void shouldKeepWorkingAfterAJobThrows() throws InterruptedException {
        TaskAgents workers = new TaskAgents("pega-test-flaky", 1, 4, NanoClock.SYSTEM).start(new AgentGroup());
        CountDownLatch after = new CountDownLatch(1);
        workers.submit(new TaskAgents.Job(
                "boom",
                () -> {
                    throw new IllegalStateException("peer gone");
                },
                () -> {}));
        workers.submit(new TaskAgents.Job("next", after::countDown, () -> {}));
        assertThat(after.await(10, TimeUnit.SECONDS)).isTrue();
        workers.close(5, TimeUnit.SECONDS);
    }

    @Test
    void shouldRunACompletionOnTheCallerWhenTheQueueRefusesIt() {
        TaskAgents workers = new TaskAgents("pega-test-complete", 1, 1, NanoClock.SYSTEM);
        workers.close(1, TimeUnit.SECONDS);
        Executor completions = workers.orCallerRuns();
        AtomicInteger ran = new AtomicInteger();
        completions.execute(ran::incrementAndGet); // closed: runs here, late but not lost
        assertThat(ran.get()).isEqualTo(1);
    }
}
