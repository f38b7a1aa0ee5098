package io.pegaflow.kernel.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The bounded way into an agent: any thread {@link #offer}s a command, the agent's thread {@link #drain}s them in
 * arrival order. Commands are the records of one {@code sealed interface} (checked at construction): the agent
 * dispatches over a closed set of types the compiler knows, and there is no {@code Object} queue or stop marker
 * (stopping is the runner's business, see {@link AgentRunner#close()}).
 *
 * <p>Bounded, never blocking the producer: a full queue answers {@link Offer#FULL} and the caller reports that
 * (drops and counts, or fails its request with a clear error). {@link #close()} atomically stops accepting and hands
 * back what was still queued, so a command is either drained by the agent or returned by {@code close()} to the owner
 * that releases it; a producer racing with the close gets {@link Offer#CLOSED}. Nothing is lost in between
 * (jcstress: {@code io.pegaflow.concurrency.agent.CommandQueueOfferVsClose}).
 *
 * <p>One lock guards the ring: an offer costs one uncontended lock and a signal, like the
 * {@code LinkedBlockingQueue} of a single-thread executor it replaces.
 *
 * @param <C> the sealed command type
 */
public final class CommandQueue<C> {
    /** What {@link #offer} did. */
    public enum Offer {
        /** Queued; the agent will handle it. */
        ACCEPTED,
        /** Refused: {@link #capacity()} commands are waiting. The caller still owns the command. */
        FULL,
        /** Refused: the queue was closed (the agent stopped or is stopping). The caller still owns the command. */
        CLOSED
    }

    private final Object[] ring;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    private final Condition notFull = lock.newCondition();
    private int head;
    private int count;
    private boolean closed;

    /**
     * @param type the sealed interface (or sealed class) every command implements, or the one record type of a queue
     *     that carries a single kind of command
     * @param capacity the most commands that may wait at once (>= 1)
     * @throws IllegalArgumentException when {@code type} is neither sealed nor a record, or the capacity is below 1
     */
    public CommandQueue(Class<C> type, int capacity) {
        if (!type.isSealed() && !type.isRecord()) {
            throw new IllegalArgumentException("command type " + type.getName()
                    + " (expected: a sealed interface of command records, or one record type)");
        }
        if (capacity < 1) {
            throw new IllegalArgumentException("command queue capacity: " + capacity + " (expected: >= 1)");
        }
        this.ring = new Object[capacity];
    }

    /** Queues {@code command} unless the queue is full or closed. Never blocks. Any thread. */
    public Offer offer(C command) {
        lock.lock();
        try {
            return enqueue(command);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Queues {@code command}, waiting up to {@code timeoutNanos} for room: for commands that must get in (a flush
     * barrier) but must not wait forever. {@link Offer#FULL} means the deadline passed.
     */
    public Offer offer(C command, long timeoutNanos) {
        long nanos = timeoutNanos;
        lock.lock();
        try {
            while (!closed && count == ring.length && nanos > 0) {
                nanos = notFull.awaitNanos(nanos);
            }
            return enqueue(command);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return closed ? Offer.CLOSED : Offer.FULL;
        } finally {
            lock.unlock();
        }
    }

    private Offer enqueue(C command) {
        if (closed) {
            return Offer.CLOSED;
        }
        if (count == ring.length) {
            return Offer.FULL;
        }
        ring[(head + count) % ring.length] = command;
        count++;
        notEmpty.signal();
        return Offer.ACCEPTED;
    }

    /**
     * Hands up to {@code limit} queued commands, oldest first, to {@code handler} on the calling thread (the agent's),
     * outside the lock, so a handler may offer to this queue again.
     *
     * @return how many were handed over
     */
    public int drain(Consumer<? super C> handler, int limit) {
        Object[] taken;
        int n;
        lock.lock();
        try {
            n = Math.min(limit, count);
            if (n <= 0) {
                return 0;
            }
            taken = new Object[n];
            for (int i = 0; i < n; i++) {
                taken[i] = ring[head];
                ring[head] = null;
                head = (head + 1) % ring.length;
            }
            count -= n;
            notFull.signalAll();
        } finally {
            lock.unlock();
        }
        for (int i = 0; i < n; i++) {
            handler.accept(cast(taken[i]));
        }
        return n;
    }

    /**
     * Refuses every later offer but leaves what is queued to be drained: the first half of an orderly stop (the agent
     * then finishes the queued work and {@link #close()} hands back whatever is left). Idle waits return at once
     * from now on. Idempotent.
     */
    public void stopAccepting() {
        lock.lock();
        try {
            closed = true;
            notEmpty.signalAll();
            notFull.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Refuses every later offer and returns the commands still queued, oldest first, for the owner to complete or
     * release. A second call returns an empty list.
     */
    public List<C> close() {
        lock.lock();
        try {
            closed = true;
            notFull.signalAll();
            List<C> rest = new ArrayList<>(count);
            while (count > 0) {
                rest.add(cast(ring[head]));
                ring[head] = null;
                head = (head + 1) % ring.length;
                count--;
            }
            notEmpty.signalAll();
            return rest;
        } finally {
            lock.unlock();
        }
    }

    /** Whether offers are refused ({@link #stopAccepting()} or {@link #close()} was called). */
    public boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /** Commands waiting now (a snapshot). */
    public int size() {
        lock.lock();
        try {
            return count;
        } finally {
            lock.unlock();
        }
    }

    public int capacity() {
        return ring.length;
    }

    /**
     * The idle strategy of an agent fed by this queue: after an idle cycle, block until a command arrives, the queue
     * stops accepting, {@link IdleStrategy#wake()} is called, or {@code maxWaitNanos} pass (whichever is first). The
     * bound lets an agent that also has timed work (a heartbeat, a file check) look at its clock. Several agents may
     * drain one queue, each with its own strategy: a wake reaches exactly the agent it belongs to.
     */
    public IdleStrategy idleStrategy(long maxWaitNanos) {
        if (maxWaitNanos <= 0) {
            throw new IllegalArgumentException("idle wait: " + maxWaitNanos + " ns (expected: > 0)");
        }
        return new QueueIdle(maxWaitNanos);
    }

    private final class QueueIdle implements IdleStrategy {
        private final long maxWaitNanos;
        private boolean woken; // guarded by lock

        QueueIdle(long maxWaitNanos) {
            this.maxWaitNanos = maxWaitNanos;
        }

        @Override
        public void idle(int workCount) {
            if (workCount > 0) {
                return;
            }
            lock.lock();
            try {
                long nanos = maxWaitNanos;
                while (count == 0 && !closed && !woken && nanos > 0) {
                    nanos = notEmpty.awaitNanos(nanos);
                }
                woken = false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the runner treats an interrupt as a stop request
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void wake() {
            lock.lock();
            try {
                woken = true;
                notEmpty.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    @SuppressWarnings("unchecked") // only C instances are ever stored: offer(C) is the only writer
    private C cast(Object o) {
        return (C) o;
    }
}
