package io.pegaflow.kernel.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An agent for work driven by time alone: a few tasks, each run on its thread with a fixed delay between the end of
 * one run and the start of the next (a sweep, a sampler, a refresh). Its {@link #idleStrategy()} sleeps until the next
 * task is due, so a tick is late by the scheduler's jitter only, and a runner's stop wakes it at once.
 *
 * <p>Failure: a task that throws is logged and runs again at its next tick; a database or network hiccup must not end
 * a sweep for good (what a {@code ScheduledExecutorService} does to a periodic task that throws). An {@link Error}
 * still stops the agent, as it does every agent.
 */
public final class Ticker implements Agent {
    private static final Logger LOG = LoggerFactory.getLogger(Ticker.class);

    /**
     * One periodic task.
     *
     * @param what the task's name in log lines
     * @param firstDelayNanos from the agent's start to the first run (0 runs at once)
     * @param periodNanos from the end of one run to the start of the next
     */
    public record Tick(String what, long firstDelayNanos, long periodNanos, Runnable task) {
        public Tick {
            if (firstDelayNanos < 0 || periodNanos <= 0) {
                throw new IllegalArgumentException(
                        what + ": first delay " + firstDelayNanos + " ns, period " + periodNanos + " ns");
            }
        }

        public static Tick every(String what, long firstDelay, long period, TimeUnit unit, Runnable task) {
            return new Tick(what, unit.toNanos(firstDelay), unit.toNanos(period), task);
        }
    }

    private final String roleName;
    private final NanoClock clock;
    private final List<Tick> ticks;
    /** When each tick runs next; written on the agent's thread, read by the idle strategy on the same thread. */
    private final long[] due;

    public Ticker(String roleName, NanoClock clock, List<Tick> ticks) {
        if (ticks.isEmpty()) {
            throw new IllegalArgumentException(roleName + ": no ticks");
        }
        this.roleName = roleName;
        this.clock = clock;
        this.ticks = new ArrayList<>(ticks);
        this.due = new long[ticks.size()];
    }

    @Override
    public void onStart() {
        long now = clock.nanoTime();
        for (int i = 0; i < due.length; i++) {
            due[i] = now + ticks.get(i).firstDelayNanos();
        }
    }

    @Override
    public int doWork() {
        int ran = 0;
        for (int i = 0; i < due.length; i++) {
            if (clock.nanoTime() - due[i] >= 0) {
                Tick t = ticks.get(i);
                try {
                    t.task().run();
                } catch (RuntimeException e) {
                    LOG.warn("{} failed; it runs again at its next tick", t.what(), e);
                }
                due[i] = clock.nanoTime() + t.periodNanos();
                ran++;
            }
        }
        return ran;
    }

    /** Nanoseconds until the earliest tick is due; 0 when one is due now. */
    long nanosToNextTick() {
        long now = clock.nanoTime();
        long soonest = Long.MAX_VALUE;
        for (long d : due) {
            soonest = Math.min(soonest, Math.max(0, d - now));
        }
        return soonest;
    }

    /** The idle strategy this agent runs with: it parks until the next tick is due. */
    public IdleStrategy idleStrategy() {
        return IdleStrategy.parkingFor(this::nanosToNextTick);
    }

    /** Starts this ticker on its own runner. */
    public AgentRunner start() {
        return new AgentRunner(this, idleStrategy(), clock).start();
    }

    @Override
    public String roleName() {
        return roleName;
    }
}
