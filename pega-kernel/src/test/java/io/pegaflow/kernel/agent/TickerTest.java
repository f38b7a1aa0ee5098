package io.pegaflow.kernel.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Time-driven work as an agent: ticks run when due, a failing tick runs again, a stop does not wait out a period. */
@Timeout(30)
class TickerTest {

    /** A clock the test moves by hand. */
    static final class ManualClock implements NanoClock {
        final AtomicLong now = new AtomicLong(1_000);

        @Override
        public long nanoTime() {
            return now.get();
        }
    }

    @Test
    void shouldRunEachTickWhenDueAndNotBefore() {
        ManualClock clock = new ManualClock();
        AtomicInteger fast = new AtomicInteger();
        AtomicInteger slow = new AtomicInteger();
        Ticker ticker = new Ticker(
                "t",
                clock,
                List.of(
                        new Ticker.Tick("fast", 0, 10, fast::incrementAndGet),
                        new Ticker.Tick("slow", 50, 100, slow::incrementAndGet)));
        ticker.onStart();

        assertThat(ticker.doWork()).isEqualTo(1); // fast is due at once, slow after 50
        assertThat(ticker.doWork()).isZero();
        assertThat(ticker.nanosToNextTick()).isEqualTo(10);
        clock.now.addAndGet(10);
        assertThat(ticker.doWork()).isEqualTo(1);
        clock.now.addAndGet(40);
        assertThat(ticker.doWork()).isEqualTo(2);
        assertThat(fast.get()).isEqualTo(3);
        assertThat(slow.get()).isEqualTo(1);
    }

    @Test
    void shouldKeepTickingAfterATaskThrows() {
        ManualClock clock = new ManualClock();
        AtomicInteger runs = new AtomicInteger();
        Ticker ticker = new Ticker("t", clock, List.of(new Ticker.Tick("flaky", 0, 5, () -> {
            runs.incrementAndGet();
            throw new IllegalStateException("database hiccup");
        })));
        ticker.onStart();
        ticker.doWork();
        clock.now.addAndGet(5);
        ticker.doWork();
        assertThat(runs.get()).isEqualTo(2);
    }

    @Test
    void shouldRunOnItsOwnThreadAndStopWithoutWaitingOutThePeriod() throws InterruptedException {
        CountDownLatch first = new CountDownLatch(1);
        Ticker ticker = new Ticker(
                "pega-test-ticker",
                NanoClock.SYSTEM,
                List.of(Ticker.Tick.every("sample", 0, 1, TimeUnit.HOURS, first::countDown)));
        AgentRunner runner = ticker.start();
        assertThat(first.await(10, TimeUnit.SECONDS)).isTrue();
        // the next tick is an hour away: close() must wake the park, not wait for it
        assertThat(runner.close(5, TimeUnit.SECONDS)).isTrue();
        assertThat(runner.state()).isEqualTo(AgentRunner.State.STOPPED);
    }

    @Test
    void shouldRefuseNonsense() {
        assertThatThrownBy(() -> new Ticker.Tick("x", 0, 0, () -> {})).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Ticker("t", NanoClock.SYSTEM, List.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
