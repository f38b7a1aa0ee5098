package io.pegaflow.core.instance;

import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.kernel.agent.Agent;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.CommandQueue;
import io.pegaflow.kernel.plan.RangePlan;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One direction of one device context, as an agent: the save lane runs device-to-pool copies, the load lane
 * pool-to-device copies, each on its own thread (the {@link DeviceCopier} contract: per-lane state such as a CUDA
 * stream needs no lock). Fed by a bounded queue; a full one refuses the copy with RESOURCE_EXHAUSTED.
 *
 * <p>Stopping drains: {@link #stop(long)} refuses new work, lets the queued copies finish and only then returns true,
 * so the owner unmaps nothing under a running copy. Whatever a dead lane could not run is abandoned (futures fail,
 * jobs release what they hold).
 */
public final class DeviceLane implements Agent {
    private static final Logger LOG = LoggerFactory.getLogger(DeviceLane.class);
    /** Copies that may wait for one lane at once. */
    public static final int QUEUE_DEPTH = 1024;

    private static final long MAX_IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Which way a lane copies. */
    public enum Direction {
        /** Device to pool (Save). */
        TO_HOST("save"),
        /** Pool to device (Load). */
        TO_DEVICE("load");

        final String label;

        Direction(String label) {
            this.label = label;
        }
    }

    /** Work that runs on the lane thread with its copier and owns what it needs until it ran or was abandoned. */
    public interface Job {
        /** Runs on the lane thread; handles its own failures. */
        void run(DeviceCopier copier);

        /** The lane stopped before running it: release and signal what the job holds. */
        void abandon();
    }

    private sealed interface Command permits Copy, Run {}

    private record Copy(RangePlan plan, CompletableFuture<Void> done) implements Command {}

    private record Run(Job job) implements Command {}

    private final String role;
    private final int deviceId;
    private final Direction direction;
    private final DeviceCopier copier;
    private final CommandQueue<Command> queue = new CommandQueue<>(Command.class, QUEUE_DEPTH);
    private final AgentRunner runner;

    DeviceLane(String role, int deviceId, Direction direction, DeviceCopier copier) {
        this.role = role;
        this.deviceId = deviceId;
        this.direction = direction;
        this.copier = copier;
        this.runner = new AgentRunner(this, queue.idleStrategy(MAX_IDLE_NANOS));
    }

    void start(AgentGroup agents) {
        agents.add(runner.start());
    }

    AgentRunner runner() {
        return runner;
    }

    @Override
    public String roleName() {
        return role;
    }

    /**
     * Queues one plan in this lane's direction.
     *
     * @return completes when every byte landed, or exceptionally with the copier's error
     * @throws EngineException FAILED_PRECONDITION while the device is being unregistered, RESOURCE_EXHAUSTED when
     *     {@link #QUEUE_DEPTH} copies are waiting
     */
    public CompletableFuture<Void> copy(RangePlan plan) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        accept(new Copy(plan, done));
        return done;
    }

    /**
     * Queues the copier's preparation for plans of up to {@code ranges} ranges and {@code bytes} in all
     * ({@link DeviceCopier#prepareToHost}); same refusals as {@link #copy}.
     *
     * @return completes once the preparation ran, failed (the lane logs it) or was abandoned by a stopping lane
     */
    CompletableFuture<Void> prepare(long ranges, long bytes) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        submit(new Job() {
            @Override
            public void run(DeviceCopier c) {
                try {
                    if (direction == Direction.TO_HOST) {
                        c.prepareToHost(ranges, bytes);
                    } else {
                        c.prepareToDevice(ranges, bytes);
                    }
                } finally {
                    done.complete(null);
                }
            }

            @Override
            public void abandon() {
                done.complete(null);
            }
        });
        return done;
    }

    /** Queues a job; same refusals as {@link #copy}, after which the caller still owns what the job holds. */
    public void submit(Job job) {
        accept(new Run(job));
    }

    private void accept(Command command) {
        switch (queue.offer(command)) {
            case ACCEPTED -> {}
            case FULL ->
                throw EngineException.resourceExhausted("device " + deviceId + " " + direction.label + " lane is full ("
                        + QUEUE_DEPTH + " copies waiting)");
            case CLOSED -> throw EngineException.failedPrecondition("device " + deviceId + " is being unregistered");
        }
    }

    @Override
    public int doWork() {
        return queue.drain(this::handle, 16);
    }

    private void handle(Command command) {
        if (command instanceof Copy c) {
            try {
                if (direction == Direction.TO_HOST) {
                    copier.copyToHost(c.plan());
                } else {
                    copier.copyToDevice(c.plan());
                }
                c.done().complete(null);
            } catch (RuntimeException e) {
                c.done().completeExceptionally(e);
            }
        } else if (command instanceof Run r) {
            try {
                r.job().run(copier);
            } catch (RuntimeException e) {
                LOG.error("{}: a copy job failed", role, e);
            }
        }
    }

    @Override
    public void onClose() {
        for (Command command : queue.close()) {
            if (command instanceof Copy c) {
                c.done().completeExceptionally(EngineException.unavailable(role + " stopped before the copy ran"));
            } else if (command instanceof Run r) {
                r.job().abandon();
            }
        }
    }

    /** Refuses new copies, finishes the queued ones; true once the lane thread ended within the timeout. */
    boolean stop(long timeoutNanos) {
        queue.stopAccepting();
        return runner.close(timeoutNanos, TimeUnit.NANOSECONDS);
    }
}
