package io.pegaflow.kernel.agent;

/**
 * What an {@link AgentRunner} does between duty cycles: nothing after a cycle that did work, otherwise wait a bounded
 * time for more (Agrona's {@code IdleStrategy}, with an explicit {@link #wake()} so a stop never waits out a full
 * idle period).
 *
 * <p>The two strategies here never spin (the machine this runs on may have two cores): {@link
 * CommandQueue#idleStrategy(long)} blocks until a command arrives, and {@link #parking(long)} sleeps for a period,
 * for agents driven by time alone.
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
}
