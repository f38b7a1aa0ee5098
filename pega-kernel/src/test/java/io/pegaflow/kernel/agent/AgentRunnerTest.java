package io.pegaflow.kernel.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** One loop shape for every thread: lifecycle, draining on close, and failing loudly. */
@Timeout(30)
class AgentRunnerTest {
    private static final long FOREVER_NANOS = TimeUnit.HOURS.toNanos(1);

    sealed interface Command permits Add, Boom {}

    record Add(int n) implements Command {}

    record Boom() implements Command {}

    /** Sums what it is sent; a Boom throws out of doWork. Records which thread ran each callback. */
    static final class Summer implements Agent {
        final CommandQueue<Command> queue = new CommandQueue<>(Command.class, 16);
        final List<String> events = new CopyOnWriteArrayList<>();
        final AtomicInteger sum = new AtomicInteger();
        final CountDownLatch started = new CountDownLatch(1);
        volatile List<Command> leftOver = List.of();

        @Override
        public void onStart() {
            events.add("start@" + Thread.currentThread().getName());
            started.countDown();
        }

        @Override
        public int doWork() {
            return queue.drain(this::handle, 4);
        }

        private void handle(Command c) {
            if (c instanceof Add a) {
                sum.addAndGet(a.n());
            } else if (c instanceof Boom) {
                throw new IllegalStateException("boom");
            }
        }

        @Override
        public void onClose() {
            leftOver = queue.close();
            events.add("close@" + Thread.currentThread().getName());
        }

        @Override
        public String roleName() {
            return "pega-test-summer";
        }
    }

    @Test
    void shouldNotRunAnythingUntilStarted() throws InterruptedException {
        Summer agent = new Summer();
        AgentRunner runner = new AgentRunner(agent, agent.queue.idleStrategy(FOREVER_NANOS));
        agent.queue.offer(new Add(1));
        assertThat(runner.state()).isEqualTo(AgentRunner.State.NEW);
        assertThat(agent.started.await(50, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(agent.sum).hasValue(0);
        runner.close();
    }

    @Test
    void shouldRunTheDutyCycleOnItsOwnNamedThread() throws InterruptedException {
        Summer agent = new Summer();
        AgentRunner runner = new AgentRunner(agent, agent.queue.idleStrategy(FOREVER_NANOS)).start();
        agent.started.await();
        assertThat(runner.state()).isEqualTo(AgentRunner.State.RUNNING);
        for (int i = 1; i <= 10; i++) {
            agent.queue.offer(new Add(i));
        }
        assertThat(runner.close(10, TimeUnit.SECONDS)).isTrue();
        assertThat(agent.sum).as("everything queued before close is handled").hasValue(55);
        assertThat(agent.events).containsExactly("start@pega-test-summer", "close@pega-test-summer");
        assertThat(runner.state()).isEqualTo(AgentRunner.State.STOPPED);
        assertThat(runner.failure()).isEmpty();
    }

    @Test
    void shouldLeaveNoLiveThreadOnceCloseReturned() throws InterruptedException {
        // The loop ends a few instructions before the thread does; close must wait for the thread, not only the loop,
        // or whoever counts live threads right after close (the lanes' tests, a leak check) sees a stray one.
        for (int i = 0; i < 50; i++) {
            Summer agent = new Summer();
            AgentRunner runner = new AgentRunner(agent, agent.queue.idleStrategy(FOREVER_NANOS)).start();
            agent.started.await();
            assertThat(runner.close(10, TimeUnit.SECONDS)).isTrue();
            assertThat(Thread.getAllStackTraces().keySet())
                    .as("round %d", i)
                    .noneMatch(t -> t.isAlive() && t.getName().equals("pega-test-summer"));
        }
    }

    @Test
    void shouldRefuseASecondStart() {
        Summer agent = new Summer();
        AgentRunner runner = new AgentRunner(agent, agent.queue.idleStrategy(FOREVER_NANOS)).start();
        assertThatThrownBy(runner::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("pega-test-summer");
        runner.close();
        assertThatThrownBy(runner::start).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldCloseAnAgentThatNeverStartedOnTheClosingThread() {
        Summer agent = new Summer();
        agent.queue.offer(new Add(3));
        AgentRunner runner = new AgentRunner(agent, agent.queue.idleStrategy(FOREVER_NANOS));
        runner.close();
        runner.close();
        assertThat(agent.events)
                .containsExactly("close@" + Thread.currentThread().getName());
        assertThat(agent.leftOver).containsExactly(new Add(3));
        assertThat(runner.state()).isEqualTo(AgentRunner.State.STOPPED);
    }

    @Test
    void shouldRecordAFailureStopTheAgentAndStillCloseIt() throws InterruptedException {
        Summer agent = new Summer();
        AgentGroup group = new AgentGroup();
        AgentRunner runner = group.add(new AgentRunner(agent, agent.queue.idleStrategy(FOREVER_NANOS)).start());
        agent.queue.offer(new Add(2));
        agent.queue.offer(new Boom());
        agent.queue.offer(new Add(100)); // same drain as the Boom: never handled, handed back by onClose
        while (runner.state() == AgentRunner.State.RUNNING) {
            Thread.onSpinWait();
        }
        assertThat(runner.close(10, TimeUnit.SECONDS)).isTrue();
        assertThat(runner.state()).isEqualTo(AgentRunner.State.FAILED);
        assertThat(runner.failure()).get().asString().contains("boom");
        assertThat(agent.events).last().asString().startsWith("close@");
        assertThat(agent.queue.offer(new Add(1)))
                .as("a dead agent's queue refuses work instead of filling up")
                .isEqualTo(CommandQueue.Offer.CLOSED);
        assertThat(group.failed()).singleElement().satisfies(s -> {
            assertThat(s.roleName()).isEqualTo("pega-test-summer");
            assertThat(s.failure()).contains("IllegalStateException: boom");
        });
        group.remove(runner);
        assertThat(group.failed()).as("a failure stays reported").hasSize(1);
    }

    @Test
    void shouldReportAnErrorThrownFromOnStart() {
        Agent agent = new Agent() {
            @Override
            public void onStart() {
                throw new AssertionError("no device");
            }

            @Override
            public int doWork() {
                return 0;
            }

            @Override
            public String roleName() {
                return "pega-test-broken";
            }
        };
        AgentRunner runner = new AgentRunner(agent, IdleStrategy.parking(FOREVER_NANOS)).start();
        while (runner.state() == AgentRunner.State.RUNNING) {
            Thread.onSpinWait();
        }
        assertThat(runner.state()).isEqualTo(AgentRunner.State.FAILED);
        assertThat(runner.failure()).get().isInstanceOf(AssertionError.class);
    }

    @Test
    void shouldWakeAParkedTimerAgentToStop() {
        AtomicInteger cycles = new AtomicInteger();
        Agent timer = new Agent() {
            @Override
            public int doWork() {
                cycles.incrementAndGet();
                return 0;
            }

            @Override
            public String roleName() {
                return "pega-test-timer";
            }
        };
        AgentRunner runner = new AgentRunner(timer, IdleStrategy.parking(FOREVER_NANOS)).start();
        while (cycles.get() == 0) {
            Thread.onSpinWait();
        }
        // Parked for an hour unless close() wakes it.
        assertThat(runner.close(20, TimeUnit.SECONDS)).isTrue();
        assertThat(runner.state()).isEqualTo(AgentRunner.State.STOPPED);
    }

    @Test
    void shouldListTrackedRunnersAndForgetStoppedOnes() {
        AgentGroup group = new AgentGroup();
        Summer agent = new Summer();
        AgentRunner runner = group.add(new AgentRunner(agent, agent.queue.idleStrategy(FOREVER_NANOS)).start());
        assertThat(group.statuses())
                .singleElement()
                .satisfies(s -> assertThat(s.state()).isEqualTo(AgentRunner.State.RUNNING));
        assertThat(group.failed()).isEmpty();
        runner.close();
        group.remove(runner);
        assertThat(group.statuses()).isEmpty();
    }

    @Test
    void shouldReportADutyCycleThatRunsPastTheStallThreshold() throws InterruptedException {
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(1_000);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Agent stuck = new Agent() {
            @Override
            public int doWork() {
                entered.countDown();
                try {
                    // stands for a native wait the JVM cannot bound; the test's own wait has a deadline
                    release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return 0;
            }

            @Override
            public String roleName() {
                return "pega-test-stuck";
            }
        };
        AgentGroup group = new AgentGroup();
        AgentRunner runner = group.add(new AgentRunner(stuck, IdleStrategy.parking(1_000_000), now::get).start());
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

        now.addAndGet(AgentRunner.STALL_THRESHOLD_NANOS);
        assertThat(runner.stalled()).isFalse();
        now.addAndGet(1);
        assertThat(runner.stalled()).isTrue();
        assertThat(group.stalled()).extracting(AgentGroup.Status::roleName).containsExactly("pega-test-stuck");

        release.countDown();
        assertThat(runner.close(10, TimeUnit.SECONDS)).isTrue();
        assertThat(runner.busyNanos()).isZero();
        assertThat(group.stalled()).isEmpty();
    }

    /**
     * Closes one "endpoint" per cycle once its own shutdown was asked for; its second cycle reads "not asked", then
     * holds until the runner's stop was requested, and finds no work: the interleaving of a lane's shutdown racing a
     * cycle that began just before it.
     */
    static final class ClosingLane implements Agent {
        final CountDownLatch secondCycleRead = new CountDownLatch(1);
        final CountDownLatch stopRequested = new CountDownLatch(1);
        volatile boolean shutdownAsked;
        volatile int leftAtClose = -1;
        private int cycles;
        private int endpointsOpen = 3;

        @Override
        public int doWork() {
            boolean asked = shutdownAsked;
            if (++cycles == 2) {
                secondCycleRead.countDown();
                try {
                    assertThat(stopRequested.await(10, TimeUnit.SECONDS)).isTrue();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return 0;
            }
            if (asked && endpointsOpen > 0) {
                endpointsOpen--;
                return 1;
            }
            return 0;
        }

        @Override
        public void onClose() {
            leftAtClose = endpointsOpen;
        }

        @Override
        public String roleName() {
            return "pega-test-closing-lane";
        }
    }

    /**
     * An agent that asks to be stopped on its own terms first (a transfer lane: shutdown, then close) must see that
     * request in the cycle that lets its loop end, never only in a cycle that began before it.
     */
    @Test
    void shouldEndTheLoopOnlyAfterACycleThatBeganOnceTheStopWasVisible() throws InterruptedException {
        ClosingLane agent = new ClosingLane();
        IdleStrategy idle = new IdleStrategy() {
            @Override
            public void idle(int workCount) {
                Thread.onSpinWait();
            }

            @Override
            public void wake() {
                agent.stopRequested.countDown(); // close() sets its stop flag, then wakes the idler
            }
        };
        AgentRunner runner = new AgentRunner(agent, idle).start();
        assertThat(agent.secondCycleRead.await(10, TimeUnit.SECONDS)).isTrue();
        agent.shutdownAsked = true;
        assertThat(runner.close(10, TimeUnit.SECONDS)).isTrue();

        assertThat(agent.leftAtClose)
                .as("endpoints still open when the loop ended")
                .isZero();
    }
}
