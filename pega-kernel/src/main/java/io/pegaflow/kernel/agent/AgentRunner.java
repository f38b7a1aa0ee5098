package io.pegaflow.kernel.agent;

import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one {@link Agent} on a thread it owns (Agrona's {@code AgentRunner}): {@code onStart}, then {@code doWork} and
 * {@link IdleStrategy#idle} in a loop, then {@code onClose}.
 *
 * <p>Lifecycle: constructing creates nothing that runs; {@link #start()} starts the thread (once). {@link #close()}
 * asks the agent to stop and waits, with a deadline, for it: the loop keeps calling {@code doWork} until a cycle does
 * nothing, so commands queued before the close are still handled (the owner closes the agent's queue first, so
 * nothing new arrives). A runner that never started runs {@code onClose} on the closing thread.
 *
 * <p>Failure: a {@link Throwable} escaping {@code onStart} or {@code doWork} stops the agent. The runner logs it at
 * ERROR, records it ({@link #failure()}), still calls {@code onClose} and ends in {@link State#FAILED}, so the
 * process health can turn DOWN instead of a dead thread going unnoticed ({@link AgentGroup}).
 *
 * <p>Stalls: a wait inside {@code doWork} that the JVM cannot bound (a native copy or {@code cuEventSynchronize}, a
 * {@code pread} on a hung disk) would otherwise leave the thread blocked with nobody told. The runner notes when each
 * duty cycle began, and {@link #busyNanos} says how long the current one has run, so health can name an agent stuck
 * past {@link #STALL_THRESHOLD_NANOS} (decision 0016).
 *
 * <p>An interrupt of the runner's thread is treated as a stop request.
 */
public final class AgentRunner implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AgentRunner.class);
    /** How long {@link #close()} waits for the agent to finish its queued work. */
    public static final long DEFAULT_CLOSE_TIMEOUT_MILLIS = 30_000;
    /**
     * A duty cycle running longer than this is reported as stalled: every bounded step of an agent (one copy plan,
     * one batch of SSD I/O, one RPC with its deadline) ends well within it.
     */
    public static final long STALL_THRESHOLD_NANOS = TimeUnit.SECONDS.toNanos(60);

    private static final long IDLE = Long.MIN_VALUE;

    /** Where a runner stands. */
    public enum State {
        /** Built, not started. */
        NEW,
        /** Its thread is in the duty cycle. */
        RUNNING,
        /** Stopped on request; {@code onClose} ran. */
        STOPPED,
        /** Stopped because the agent threw; {@link #failure()} says what. */
        FAILED
    }

    private final Agent agent;
    private final IdleStrategy idle;
    private final Thread thread;
    private final NanoClock clock;
    private volatile long dutyStartedNanos = IDLE;
    private boolean started; // guarded by this
    private boolean closed; // guarded by this
    private final CountDownLatch terminated = new CountDownLatch(1);
    private volatile boolean stopRequested;
    private volatile State state = State.NEW;
    private volatile @Nullable Throwable failure;

    public AgentRunner(Agent agent, IdleStrategy idle) {
        this(agent, idle, NanoClock.SYSTEM);
    }

    /** A runner whose stall report reads {@code clock}. */
    public AgentRunner(Agent agent, IdleStrategy idle, NanoClock clock) {
        this.agent = agent;
        this.idle = idle;
        this.clock = clock;
        this.thread = new Thread(this::run, agent.roleName());
        this.thread.setDaemon(true);
    }

    /** Starts the agent's thread. Once; a second call, or a call after {@link #close()}, throws. */
    public synchronized AgentRunner start() {
        if (started || closed) {
            throw new IllegalStateException("agent " + agent.roleName() + " was already started or closed");
        }
        started = true;
        state = State.RUNNING;
        thread.start();
        return this;
    }

    private void run() {
        try {
            agent.onStart();
            while (true) {
                // Read before the cycle: the loop ends only after a whole cycle that began once the stop was visible
                // found no work. An agent that a stop request of its own precedes (a lane's shutdown, then close())
                // therefore sees that request in the cycle that decides, never only in a cycle that started before it.
                boolean stopping = stopRequested || Thread.currentThread().isInterrupted();
                dutyStartedNanos = clock.nanoTime();
                int work = agent.doWork();
                dutyStartedNanos = IDLE;
                if (work <= 0 && stopping) {
                    break;
                }
                idle.idle(work);
            }
        } catch (Throwable t) { // Errors included: a dead agent must be reported, never just vanish
            dutyStartedNanos = IDLE;
            fail(t);
        }
        try {
            agent.onClose();
        } catch (Throwable t) {
            if (failure == null) {
                fail(t);
            } else {
                LOG.error("agent {} also failed while closing", agent.roleName(), t);
            }
        }
        if (state != State.FAILED) {
            state = State.STOPPED;
        }
        terminated.countDown();
    }

    private void fail(Throwable t) {
        failure = t;
        state = State.FAILED;
        LOG.error("agent {} failed and stopped; its work is no longer done", agent.roleName(), t);
    }

    public String roleName() {
        return agent.roleName();
    }

    public State state() {
        return state;
    }

    /** How long the duty cycle now running has taken so far; 0 while the agent idles or is not running. */
    public long busyNanos() {
        long started = dutyStartedNanos;
        return started == IDLE ? 0 : Math.max(0, clock.nanoTime() - started);
    }

    /** Whether the current duty cycle has run past {@link #STALL_THRESHOLD_NANOS}. */
    public boolean stalled() {
        return busyNanos() > STALL_THRESHOLD_NANOS;
    }

    /** What stopped the agent, if it failed. */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    /** Stops the agent, waiting up to {@link #DEFAULT_CLOSE_TIMEOUT_MILLIS}. Idempotent. */
    @Override
    public void close() {
        close(DEFAULT_CLOSE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * Asks the agent to stop after its queued work and waits for its thread to end.
     *
     * @return true when the agent has stopped (or failed); false when it was still running at the deadline (logged)
     */
    public boolean close(long timeout, TimeUnit unit) {
        synchronized (this) {
            boolean first = !closed;
            closed = true;
            if (!started) {
                if (first) {
                    closeUnstarted();
                }
                return true;
            }
        }
        stopRequested = true;
        idle.wake();
        try {
            if (terminated.await(timeout, unit)) {
                // The latch opens as the loop ends; the thread itself ends a few instructions later. Joining makes
                // "stopped" mean no live thread, which is what callers that count threads after close rely on.
                if (Thread.currentThread() != thread) {
                    thread.join(Math.max(1, unit.toMillis(timeout)));
                }
                return true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LOG.warn("agent {} did not stop within {} {}", agent.roleName(), timeout, unit);
        return false;
    }

    /** Never ran: nothing is in a loop, so release what the agent holds on this thread. */
    private void closeUnstarted() {
        try {
            agent.onClose();
            state = State.STOPPED;
        } catch (RuntimeException e) {
            fail(e);
        }
        terminated.countDown();
    }
}
