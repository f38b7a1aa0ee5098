package io.pegaflow.kernel.agent;

/**
 * One thread's duty cycle (the shape of Agrona's {@code Agent}): an {@link AgentRunner} calls {@link #doWork()} in a
 * loop and idles through its {@link IdleStrategy} whenever a cycle did nothing.
 *
 * <p>Contract: every method runs on the runner's thread, so an agent keeps its state in plain fields. {@code doWork}
 * does a bounded amount of work (drain at most N commands, free at most N resources) and returns how much it did;
 * 0 means "nothing to do, idle now". Other threads reach an agent only through its {@link CommandQueue}.
 *
 * <p>Failure: an agent handles the failures it expects (one bad command must not stop the loop). Anything that still
 * escapes {@code doWork} stops the agent: the runner records it, logs it, calls {@link #onClose()} and reports the
 * agent as {@link AgentRunner.State#FAILED}.
 */
public interface Agent {

    /** Called once on the runner's thread before the first duty cycle. */
    default void onStart() {}

    /**
     * One duty cycle.
     *
     * @return the amount of work done (commands handled, completions reaped); 0 lets the runner idle
     */
    int doWork();

    /**
     * Called once when the agent stops, on its thread (or on the closing thread when it never started), also after a
     * failure: release what the agent owns and complete what is still queued.
     */
    default void onClose() {}

    /** The thread's name and the agent's label in health and logs, e.g. {@code pega-seal}. */
    String roleName();
}
