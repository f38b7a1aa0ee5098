package io.pegaflow.kernel.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The agents of one process, for health: the engine, its tiers and the cluster client each add the runners they
 * start. A runner leaves the group when its owner removes it, except a failed one: a failure stays reported until the
 * process restarts, so a thread that died never disappears from the health check with the resource it served.
 *
 * <p>Thread-safe; reads are snapshots.
 */
public final class AgentGroup {
    private final List<AgentRunner> runners = new CopyOnWriteArrayList<>();

    /** One runner's state, for reporting. */
    public record Status(String roleName, AgentRunner.State state, String failure, long busyNanos) {
        /** Whether the agent died instead of being stopped. */
        public boolean failed() {
            return state == AgentRunner.State.FAILED;
        }

        /** Whether its current duty cycle has run past {@link AgentRunner#STALL_THRESHOLD_NANOS}. */
        public boolean stalled() {
            return busyNanos > AgentRunner.STALL_THRESHOLD_NANOS;
        }
    }

    /** Tracks {@code runner}; returns it. */
    public AgentRunner add(AgentRunner runner) {
        runners.add(runner);
        return runner;
    }

    /** Stops tracking {@code runner} unless it failed. */
    public void remove(AgentRunner runner) {
        if (runner.state() != AgentRunner.State.FAILED) {
            runners.remove(runner);
        }
    }

    /** Every tracked runner, in the order they were added. */
    public List<Status> statuses() {
        List<Status> out = new ArrayList<>(runners.size());
        for (AgentRunner r : runners) {
            out.add(new Status(
                    r.roleName(),
                    r.state(),
                    r.failure().map(Throwable::toString).orElse(""),
                    r.busyNanos()));
        }
        return out;
    }

    /** The runners stuck in one duty cycle past the stall threshold. */
    public List<Status> stalled() {
        return statuses().stream().filter(Status::stalled).toList();
    }

    /** The runners that failed. */
    public List<Status> failed() {
        return statuses().stream().filter(Status::failed).toList();
    }
}
