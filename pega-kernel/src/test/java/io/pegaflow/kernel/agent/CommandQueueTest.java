package io.pegaflow.kernel.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bounded, sealed, close-safe command queue every agent is fed by. */
@Timeout(30)
class CommandQueueTest {
    /** Longer than any test may run: a wait that returns did so because it was woken, never by timing out. */
    private static final long FOREVER_NANOS = TimeUnit.HOURS.toNanos(1);

    sealed interface Command permits Work, Ping {}

    record Work(int n) implements Command {}

    record Ping() implements Command {}

    interface Unsealed {}

    @Test
    void shouldRefuseAnUnsealedCommandType() {
        assertThatThrownBy(() -> new CommandQueue<>(Unsealed.class, 4))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Unsealed")
                .hasMessageContaining("expected: a sealed interface of command records, or one record type");
        assertThatThrownBy(() -> new CommandQueue<>(Object.class, 4)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldAcceptOneRecordTypeAsAClosedSetOfOne() {
        CommandQueue<Work> queue = new CommandQueue<>(Work.class, 1);
        assertThat(queue.offer(new Work(1))).isEqualTo(CommandQueue.Offer.ACCEPTED);
    }

    @Test
    void shouldRefuseACapacityBelowOne() {
        assertThatThrownBy(() -> new CommandQueue<>(Command.class, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("command queue capacity: 0 (expected: >= 1)");
    }

    @Test
    void shouldDrainInArrivalOrderUpToTheLimit() {
        CommandQueue<Command> queue = new CommandQueue<>(Command.class, 8);
        for (int i = 0; i < 5; i++) {
            assertThat(queue.offer(new Work(i))).isEqualTo(CommandQueue.Offer.ACCEPTED);
        }
        List<Command> seen = new ArrayList<>();
        assertThat(queue.drain(seen::add, 3)).isEqualTo(3);
        assertThat(queue.size()).isEqualTo(2);
        assertThat(queue.drain(seen::add, 10)).isEqualTo(2);
        assertThat(queue.drain(seen::add, 10)).isZero();
        assertThat(seen).containsExactly(new Work(0), new Work(1), new Work(2), new Work(3), new Work(4));
    }

    @Test
    void shouldAnswerFullWithoutBlockingAndAcceptAgainAfterADrain() {
        CommandQueue<Command> queue = new CommandQueue<>(Command.class, 2);
        assertThat(queue.offer(new Work(1))).isEqualTo(CommandQueue.Offer.ACCEPTED);
        assertThat(queue.offer(new Work(2))).isEqualTo(CommandQueue.Offer.ACCEPTED);
        assertThat(queue.offer(new Work(3))).isEqualTo(CommandQueue.Offer.FULL);
        assertThat(queue.drain(c -> {}, 1)).isEqualTo(1);
        assertThat(queue.offer(new Work(4))).isEqualTo(CommandQueue.Offer.ACCEPTED);
        List<Command> seen = new ArrayList<>();
        queue.drain(seen::add, 10);
        assertThat(seen).containsExactly(new Work(2), new Work(4)); // the refused one never entered
    }

    @Test
    void shouldWrapAroundTheRing() {
        CommandQueue<Command> queue = new CommandQueue<>(Command.class, 3);
        List<Command> seen = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            queue.offer(new Work(i));
            if (i % 2 == 1) {
                queue.drain(seen::add, 2);
            }
        }
        assertThat(seen).extracting(c -> ((Work) c).n()).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    }

    @Test
    void shouldHandBackWhatWasQueuedWhenClosedAndRefuseLaterOffers() {
        CommandQueue<Command> queue = new CommandQueue<>(Command.class, 4);
        queue.offer(new Work(1));
        queue.offer(new Ping());
        assertThat(queue.close()).containsExactly(new Work(1), new Ping());
        assertThat(queue.isClosed()).isTrue();
        assertThat(queue.offer(new Work(2))).isEqualTo(CommandQueue.Offer.CLOSED);
        assertThat(queue.close()).isEmpty();
        assertThat(queue.drain(c -> {}, 10)).isZero();
    }

    @Test
    void shouldLetAHandlerOfferToTheSameQueue() {
        CommandQueue<Command> queue = new CommandQueue<>(Command.class, 4);
        queue.offer(new Work(1));
        queue.drain(c -> queue.offer(new Ping()), 10);
        assertThat(queue.size()).isEqualTo(1);
    }

    @Test
    void shouldWakeAnIdlingConsumerWhenACommandArrives() throws InterruptedException {
        CommandQueue<Command> queue = new CommandQueue<>(Command.class, 4);
        IdleStrategy idle = queue.idleStrategy(FOREVER_NANOS);
        CountDownLatch idling = new CountDownLatch(1);
        CountDownLatch woke = new CountDownLatch(1);
        Thread consumer = new Thread(() -> {
            idling.countDown();
            idle.idle(0);
            woke.countDown();
        });
        consumer.start();
        idling.await();
        queue.offer(new Work(1));
        woke.await(); // with no wake-up this outlives the test's timeout
        consumer.join();
        assertThat(queue.size()).isEqualTo(1);
    }

    @Test
    void shouldNotLoseAWakeThatCameBeforeTheIdle() {
        CommandQueue<Command> queue = new CommandQueue<>(Command.class, 4);
        IdleStrategy idle = queue.idleStrategy(FOREVER_NANOS);
        idle.wake();
        idle.idle(0); // returns at once: the earlier wake is remembered
        idle.idle(5); // a cycle that did work never waits
    }

    @Test
    void shouldReturnFromIdleOnceClosed() throws InterruptedException {
        CommandQueue<Command> queue = new CommandQueue<>(Command.class, 4);
        IdleStrategy idle = queue.idleStrategy(FOREVER_NANOS);
        Thread consumer = new Thread(() -> idle.idle(0));
        consumer.start();
        queue.close();
        consumer.join();
        idle.idle(0); // closed: never waits again
    }

    @Test
    void shouldKeepEveryCommandProducersRaceWithClose() throws InterruptedException {
        // Each offer is either drained, handed back by close(), or refused: never lost, never duplicated.
        CommandQueue<Command> queue = new CommandQueue<>(Command.class, 64);
        int producers = 2;
        int perProducer = 20_000;
        List<Thread> threads = new ArrayList<>();
        int[][] accepted = new int[producers][1];
        for (int p = 0; p < producers; p++) {
            int id = p;
            threads.add(new Thread(() -> {
                for (int i = 0; i < perProducer; i++) {
                    if (queue.offer(new Work(i)) == CommandQueue.Offer.ACCEPTED) {
                        accepted[id][0]++;
                    }
                }
            }));
        }
        threads.forEach(Thread::start);
        int drained = 0;
        while (drained < 5_000 && threads.stream().anyMatch(Thread::isAlive)) {
            drained += queue.drain(c -> {}, 16);
        }
        int handedBack = queue.close().size();
        for (Thread t : threads) {
            t.join();
        }
        assertThat(drained + handedBack).isEqualTo(accepted[0][0] + accepted[1][0]);
    }
}
