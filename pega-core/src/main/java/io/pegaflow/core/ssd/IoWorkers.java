package io.pegaflow.core.ssd;

import io.pegaflow.kernel.agent.Agent;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.CommandQueue;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The I/O half both SSD lanes share: {@code inflight} worker agents draining one bounded queue of block operations
 * (one {@code pwritev} or {@code pread} each). An operation holds one of {@code inflight} permits from
 * {@link #submit} until its handler calls {@link #done()}, so at most {@code inflight} block I/Os are queued or
 * running, and {@link #awaitIdle} is the "nothing in flight" barrier a flush needs.
 *
 * <p>Stopping ({@link #close}): wait, with a deadline, until every permit is back (no I/O in flight), then stop the
 * workers; anything a dead worker left queued is abandoned through its handler. After that no thread touches pool
 * memory or a shard file on behalf of the lane.
 *
 * @param <T> the lane's sealed operation type
 */
final class IoWorkers<T> {
    private static final long PERMIT_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long MAX_IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final int inflight;
    private final Semaphore permits;
    private final CommandQueue<T> queue;
    private final Consumer<T> abandon;
    private final List<AgentRunner> runners = new ArrayList<>();
    private volatile @Nullable AgentGroup agents; // set by start()

    /**
     * @param role thread name prefix ({@code pega-ssd-write}); workers are {@code role-0} .. {@code role-(n-1)}
     * @param run performs one operation on a worker thread and must end with {@link #done()}
     * @param abandon completes an operation that will never run, and must end with {@link #done()}
     */
    IoWorkers(String role, Class<T> type, int inflight, Consumer<T> run, Consumer<T> abandon) {
        this.inflight = inflight;
        this.permits = new Semaphore(inflight);
        this.queue = new CommandQueue<>(type, inflight);
        this.abandon = abandon;
        for (int i = 0; i < inflight; i++) {
            String name = role + "-" + i;
            Agent worker = new Agent() {
                @Override
                public int doWork() {
                    return queue.drain(run, 1);
                }

                @Override
                public String roleName() {
                    return name;
                }
            };
            runners.add(new AgentRunner(worker, queue.idleStrategy(MAX_IDLE_NANOS)));
        }
    }

    void start(AgentGroup group) {
        this.agents = group;
        for (AgentRunner r : runners) {
            group.add(r.start());
        }
    }

    /**
     * Waits for a permit, then hands {@code op} to a worker. The wait gives up once {@code stopping} says so.
     *
     * @return false when the operation was not queued (the caller completes it itself, without {@link #done()})
     */
    boolean submit(T op, BooleanSupplier stopping) {
        if (stopping.getAsBoolean()) {
            return false;
        }
        try {
            while (!permits.tryAcquire(PERMIT_POLL_NANOS, TimeUnit.NANOSECONDS)) {
                if (stopping.getAsBoolean()) {
                    return false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        if (queue.offer(op) != CommandQueue.Offer.ACCEPTED) {
            permits.release(); // cannot be full (one slot per permit): the lane is closing
            return false;
        }
        return true;
    }

    /** Gives an operation's permit back; its handler's last step. */
    void done() {
        permits.release();
    }

    /** Waits until no operation is queued or running; false when that did not happen within the timeout. */
    boolean awaitIdle(long timeoutNanos) {
        try {
            if (permits.tryAcquire(inflight, timeoutNanos, TimeUnit.NANOSECONDS)) {
                permits.release(inflight);
                return true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return false;
    }

    /** Waits for the I/O in flight (bounded), stops the workers and abandons whatever they left. */
    void close(long timeoutNanos) {
        awaitIdle(timeoutNanos);
        queue.stopAccepting();
        for (AgentRunner r : runners) {
            r.close(timeoutNanos, TimeUnit.NANOSECONDS);
        }
        queue.close().forEach(abandon);
        AgentGroup group = agents;
        if (group != null) {
            runners.forEach(group::remove);
        }
    }
}
