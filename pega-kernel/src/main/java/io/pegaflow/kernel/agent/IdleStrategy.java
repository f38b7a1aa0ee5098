package io.pegaflow.kernel.agent;

import java.util.function.LongSupplier;

/**
 * What an {@link AgentRunner} does between duty cycles: nothing after a cycle that did work, otherwise wait a bounded
 * time for more (Agrona's {@code IdleStrategy}, with an explicit {@link #wake()} so a stop never waits out a full
 * idle period).
 *
 * <p>The two strategies here never spin (the machine this runs on may have two cores): {@link
 * CommandQueue#idleStrategy(long)} blocks until a command arrives, and {@link #parking(long)} sleeps for a period,
 * and {@link #parkingFor} until the next deadline, for agents driven by time alone.
 */
public interface IdleStrategy {

    /** Idles after a duty cycle that did {@code workCount} units of work; returns at once when it did any. */
    void idle(int workCount);

    /** Ends the current or the next idle period early. Any thread. */
    void wake();

    /** Parks the idling thread for up to {@code maxParkNanos} (until {@link #wake()}). */
    static IdleStrategy parking(long maxParkNanos) {
        return new ParkingIdleStrategy(maxParkNanos);
    }

    /**
     * Parks the idling thread for as long as {@code parkNanos} says before each park (until {@link #wake()}); 0 or
     * less returns at once. For agents that know their next deadline, such as a {@link Ticker}.
     */
    static IdleStrategy parkingFor(LongSupplier parkNanos) {
        return new ParkingIdleStrategy(parkNanos);
    }
}
