package io.pegaflow.kernel.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fixed set of worker agents draining one bounded queue of jobs: the kernel's answer wherever a component would
 * otherwise reach for a thread pool (the remote tier's fetchers, which wait on peers' RPCs; the transfer engine's
 * completions). Workers are {@code role-0} .. {@code role-(n-1)}; they show in the owner's {@link AgentGroup}.
 *
 * <p>Bounded, never blocking: {@link #submit} answers {@link CommandQueue.Offer#FULL} or {@code CLOSED} and the caller
 * still owns the job. A job that throws is logged and the worker goes on. {@link #close} stops taking jobs, lets the
 * workers finish what is queued within its deadline, and hands whatever is still queued then to each job's
 * {@code abandon}, so every job ends exactly once: run or abandoned.
 */
public final class TaskAgents implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TaskAgents.class);
    private static final long MAX_IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** One job: {@code run} on a worker, or {@code abandon} on the closing thread when no worker will run it. */
    public record Job(String what, Runnable run, Runnable abandon) {}

    private final String role;
    private final NanoClock clock;
    private final CommandQueue<Job> queue;
    private final List<AgentRunner> runners = new ArrayList<>();

    public TaskAgents(String role, int workers, int capacity, NanoClock clock) {
        if (workers < 1) {
            throw new IllegalArgumentException(role + ": workers " + workers + " (expected: >= 1)");
        }
        this.role = role;
        this.clock = clock;
        this.queue = new CommandQueue<>(Job.class, capacity);
        for (int i = 0; i < workers; i++) {
            String name = role + "-" + i;
            Agent worker = new Agent() {
                @Override
                public int doWork() {
                    return queue.drain(TaskAgents::runGuarded, 1);
                }

                @Override
                public String roleName() {
                    return name;
                }
            };
            runners.add(new AgentRunner(worker, queue.idleStrategy(MAX_IDLE_NANOS), clock));
        }
    }

    private static void runGuarded(Job job) {
        try {
            job.run().run();
        } catch (RuntimeException e) {
            LOG.warn("{} failed", job.what(), e);
        }
    }

    /** Starts the workers and reports them to {@code group}. Once. */
    public TaskAgents start(AgentGroup group) {
        for (AgentRunner r : runners) {
            group.add(r.start());
        }
        return this;
    }

    /** Jobs waiting for a worker now: a snapshot that may be stale as soon as it is read. */
    public int queued() {
        return queue.size();
    }

    /** Queues {@code job}; anything but {@code ACCEPTED} leaves it with the caller. */
    public CommandQueue.Offer submit(Job job) {
        return queue.offer(job);
    }

    /**
     * These workers as an {@link Executor} for callbacks that must run whatever happens (future completions): a task
     * the queue refuses (full, or closing) runs on the calling thread instead, so a completion is late, never lost.
     */
    public Executor orCallerRuns() {
        return task -> {
            if (queue.offer(new Job(role, task, task)) != CommandQueue.Offer.ACCEPTED) {
                task.run();
            }
        };
    }

    /** Stops taking jobs, waits up to {@code timeout} for the workers to finish the queue, abandons the rest. */
    public boolean close(long timeout, TimeUnit unit) {
        queue.stopAccepting();
        long deadline = clock.nanoTime() + unit.toNanos(timeout);
        boolean stopped = true;
        for (AgentRunner r : runners) {
            long left = Math.max(0, deadline - clock.nanoTime());
            stopped &= r.close(left, TimeUnit.NANOSECONDS);
        }
        for (Job job : queue.close()) {
            try {
                job.abandon().run();
            } catch (RuntimeException e) {
                LOG.warn("{} failed while abandoned at close", job.what(), e);
            }
        }
        return stopped;
    }

    @Override
    public void close() {
        close(AgentRunner.DEFAULT_CLOSE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    }
}
