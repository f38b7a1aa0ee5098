package io.pegaflow.transfer.lane;

import io.pegaflow.core.agent.NanoClock;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.RegisteredRegion;
import io.pegaflow.transfer.TransferException;
import io.pegaflow.transfer.TransferException.Kind;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection lane: a worker of the fabric (a {@code UcpWorker}), the endpoints it holds to every connected peer,
 * and the agent loop that is the only thread ever to touch them. Other threads talk to it through two queues: a
 * bounded one for batches (back-pressure: {@link Kind#BUSY}) and an unbounded one for the rare control commands (open,
 * close, shutdown), so a close is never lost to a full queue.
 *
 * <p>{@link #doWork()} is a sum of bounded steps, as an {@code Agent} of {@code core.agent} is: drain commands, issue at
 * most {@value #OPS_PER_CYCLE} operations, progress the worker, expire deadlines, finish closes. A subclass supplies
 * the fabric-specific pieces; every one of them is called on the lane thread.
 *
 * <p>Endpoint lifecycle per connection (spec/cluster.md §4.3 maps the reference's prepare/complete/abort/invalidate to
 * it): {@code OPENING -> OPEN -> CLOSING -> CLOSED}, with {@code FAILED} shown while a failed endpoint waits for its
 * close. A part (the batch's operations on this lane) ends either by the fabric's completion report or, when its
 * endpoint closes, with the connection's failure; never earlier, because until the endpoint is closed the fabric may
 * still write into the part's memory.
 *
 * @param <E> the fabric's endpoint handle
 */
public abstract class Lane<E> {
    private static final Logger LOG = LoggerFactory.getLogger(Lane.class);

    /** Batches waiting for this lane; beyond it submit fails with BUSY instead of growing without bound. */
    static final int SUBMIT_CAPACITY = 4096;

    static final int COMMANDS_PER_CYCLE = 64;
    static final int OPS_PER_CYCLE = 256;
    /** Deadlines are checked at most this often: they are seconds long, a scan per cycle would be waste. */
    static final long DEADLINE_SCAN_NANOS = 1_000_000L;
    /** A forced close is local and takes microseconds; past this the endpoint is reported wedged. */
    static final long CLOSE_WEDGED_NANOS = 10_000_000_000L;

    protected final int index;
    private final ArrayBlockingQueue<LanePart> submits = new ArrayBlockingQueue<>(SUBMIT_CAPACITY);
    private final Queue<Control> controls = new ConcurrentLinkedQueue<>();
    private final Map<Connection, Slot> slots = new HashMap<>(); // Connection has identity equality
    private final ArrayDeque<LanePart> issuing = new ArrayDeque<>();
    private final List<Slot> closing = new ArrayList<>();

    private LaneListener listener;
    private NanoClock clock;
    private volatile Thread thread;
    private long lastScanNanos;
    private boolean shuttingDown;
    private volatile boolean stopped;

    protected Lane(int index) {
        this.index = index;
    }

    // ---------------------------------------------------------------- fabric-specific pieces (lane thread)

    /** This lane's worker address, as peers' lane {@code index} endpoints connect to it. Any thread. */
    public abstract byte[] address();

    /**
     * Creates the endpoint to the peer's lane of the same index and unpacks its remote keys.
     *
     * @param failure to call (on this thread) when the endpoint later reports an error
     * @throws TransferException when the endpoint cannot be created
     */
    protected abstract E open(PeerId peer, byte[] peerLaneAddress, List<RegisteredRegion> peerRegions, Failure failure);

    /**
     * Proves the new endpoint reaches the peer (a round trip: UCX finishes its wire-up before a flush completes) and
     * then calls {@code ready}, or {@code failure} when it cannot. The lane gives up at the connection's deadline.
     */
    protected abstract void probe(E endpoint, Runnable ready, Failure failure);

    /** Issues operation {@code j} of the part; may throw when the endpoint is broken. */
    protected abstract void issue(E endpoint, LanePart part, int j);

    /**
     * All operations of the part are issued: arrange for {@link LanePart#succeed()} or {@link LanePart#fail} once they
     * completed (a flush), possibly right away.
     */
    protected abstract void issued(E endpoint, LanePart part);

    /** Starts a forced close: outstanding operations are cancelled. Returns what {@link #isClosed} polls. */
    protected abstract Object beginClose(E endpoint);

    protected abstract boolean isClosed(Object closeHandle);

    /** The endpoint is closed: release what was unpacked for it (remote keys). */
    protected abstract void afterClose(E endpoint);

    /** Progresses the worker; returns the events handled. */
    protected abstract int progress();

    /** The loop has ended and every endpoint is closed: release the worker. */
    protected abstract void release();

    /** A fabric's report that an endpoint failed. */
    @FunctionalInterface
    public interface Failure {
        void failed(TransferException cause);
    }

    // ---------------------------------------------------------------- commands (any thread)

    private sealed interface Control permits Open, Close, Shutdown {}

    private record Open(Connection connection, CompletableFuture<Void> ack) implements Control {}

    private record Close(Connection connection) implements Control {}

    private record Shutdown() implements Control {}

    final void attach(LaneListener listener, NanoClock clock) {
        this.listener = listener;
        this.clock = clock;
    }

    final CompletableFuture<Void> open(Connection connection) {
        CompletableFuture<Void> ack = new CompletableFuture<>();
        control(new Open(connection, ack));
        return ack;
    }

    /** Closes the connection's endpoint; the lane then reports {@link Connection#laneClosed()}, once. */
    final void close(Connection connection) {
        control(new Close(connection));
    }

    final void shutdown() {
        control(new Shutdown());
    }

    /** False when the lane's batch queue is full. */
    final boolean submit(LanePart part) {
        if (!submits.offer(part)) {
            return false;
        }
        wake();
        if (stopped) {
            drainAfterStop();
        }
        return true;
    }

    private void control(Control c) {
        controls.add(c);
        wake();
        if (stopped) {
            drainAfterStop(); // lost the race with the loop's end: answer it here
        }
    }

    private void wake() {
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    // ---------------------------------------------------------------- the agent (lane thread)

    final void onStart() {
        thread = Thread.currentThread();
        lastScanNanos = clock.nanoTime();
    }

    /** Whether the lane has shut down and closed every endpoint. */
    final boolean isDone() {
        return shuttingDown && slots.isEmpty();
    }

    final String roleName() {
        return "pega-transfer-lane-" + index;
    }

    final int doWork() {
        int work = drainControls() + drainSubmits() + issueSome();
        work += progress();
        long now = clock.nanoTime();
        if (now - lastScanNanos >= DEADLINE_SCAN_NANOS) {
            lastScanNanos = now;
            work += expire(now);
        }
        return work + finishCloses(now);
    }

    /** After the loop: release the worker and answer whatever raced with the end. */
    final void onClose() {
        stopped = true;
        try {
            release();
        } finally {
            drainAfterStop();
        }
    }

    private synchronized void drainAfterStop() {
        TransferException closed = new TransferException(Kind.CLOSED, "transfer engine is closed");
        for (LanePart part; (part = submits.poll()) != null; ) {
            part.fail(closed);
        }
        for (Control c; (c = controls.poll()) != null; ) {
            if (c instanceof Open open) {
                open.ack.completeExceptionally(closed);
            } else if (c instanceof Close close) {
                close.connection.laneClosed();
            }
        }
    }

    private int drainControls() {
        int n = 0;
        for (Control c; n < COMMANDS_PER_CYCLE && (c = controls.poll()) != null; n++) {
            if (c instanceof Open open) {
                onOpen(open.connection, open.ack);
            } else if (c instanceof Close close) {
                Slot slot = slots.get(close.connection);
                if (slot == null) {
                    close.connection.laneClosed();
                } else {
                    slot.closeAsked = true;
                    beginClosing(slot);
                }
            } else {
                shuttingDown = true;
                for (Slot slot : new ArrayList<>(slots.values())) {
                    beginClosing(slot);
                }
            }
        }
        return n;
    }

    private void onOpen(Connection connection, CompletableFuture<Void> ack) {
        if (shuttingDown) {
            ack.completeExceptionally(new TransferException(Kind.CLOSED, "transfer engine is closed"));
            return;
        }
        Slot slot = new Slot(connection);
        try {
            slot.endpoint = open(
                    connection.peer,
                    connection.remote.laneAddresses().get(index),
                    connection.remote.regions(),
                    slot::failed);
        } catch (RuntimeException e) {
            connection.laneState.set(index, Connection.FAILED);
            ack.completeExceptionally(
                    e instanceof TransferException te
                            ? te
                            : new TransferException(
                                    Kind.PEER_FAILED,
                                    "lane " + index + ": endpoint to " + connection.peer + " failed",
                                    e));
            return;
        }
        slot.openAck = ack;
        slots.put(connection, slot);
        probe(slot.endpoint, slot::opened, slot::failed);
    }

    private int drainSubmits() {
        int n = 0;
        for (LanePart part; n < COMMANDS_PER_CYCLE && (part = submits.poll()) != null; n++) {
            Connection connection = part.submission.connection;
            Slot slot = slots.get(connection);
            if (slot == null || slot.closing || slot.openAck != null) {
                TransferException cause = connection.failure();
                part.fail(cause != null ? cause : notConnected(connection));
                continue;
            }
            part.slot = slot;
            slot.parts.add(part);
            connection.laneInFlight.addAndGet(index, part.ops());
            issuing.add(part);
        }
        return n;
    }

    private int issueSome() {
        int budget = OPS_PER_CYCLE;
        while (budget > 0 && !issuing.isEmpty()) {
            LanePart part = issuing.peek();
            Slot slot = slotOf(part);
            if (part.isDone() || slot.closing) {
                issuing.poll(); // ends when its endpoint has closed
                continue;
            }
            int before = part.nextIssue;
            try {
                while (budget > 0 && part.nextIssue < part.ops()) {
                    issue(slot.endpoint, part, part.nextIssue++);
                    budget--;
                }
                slot.connection.laneIssued.addAndGet(index, part.nextIssue - before);
                if (part.nextIssue < part.ops()) {
                    return OPS_PER_CYCLE - budget;
                }
                issuing.poll();
                issued(slot.endpoint, part);
            } catch (RuntimeException e) {
                issuing.poll();
                slot.failed(new TransferException(
                        Kind.PEER_FAILED, "lane " + index + ": issuing to " + slot.connection.peer + " failed", e));
            }
        }
        return OPS_PER_CYCLE - budget;
    }

    @SuppressWarnings("unchecked") // only this lane sets part.slot, and only to one of its own slots
    private Slot slotOf(LanePart part) {
        return (Slot) part.slot;
    }

    private int expire(long now) {
        int expired = 0;
        for (Slot slot : slots.values()) {
            if (slot.closing) {
                continue;
            }
            if (slot.openAck != null && now - slot.connection.connectDeadlineNanos >= 0) {
                slot.failed(new TransferException(
                        Kind.TIMEOUT,
                        "lane " + index + ": " + slot.connection.peer + " did not answer the connection"
                                + " by its deadline"));
                expired++;
                continue;
            }
            for (LanePart part : slot.parts) {
                if (now - part.submission.deadlineNanos >= 0) {
                    long ms = (now - part.submission.startNanos) / 1_000_000;
                    slot.failed(new TransferException(
                            Kind.TIMEOUT,
                            "transfer to " + slot.connection.peer + " not complete after " + ms + " ms (lane " + index
                                    + "); connection dropped"));
                    expired++;
                    break;
                }
            }
        }
        return expired;
    }

    private void beginClosing(Slot slot) {
        if (slot.closing) {
            return;
        }
        slot.closing = true;
        slot.closeStartNanos = clock.nanoTime();
        slot.connection.laneState.set(index, Connection.CLOSING);
        closing.add(slot);
        try {
            slot.closeHandle = beginClose(slot.endpoint);
        } catch (RuntimeException e) {
            // the endpoint may still be live: keep its parts (and so their memory) pending, as for a wedged close
            slot.wedged = true;
            LOG.error(
                    "lane {}: cannot close the endpoint to {}; its {} in-flight parts stay pending and their memory"
                            + " must not be reused",
                    index,
                    slot.connection.peer,
                    slot.parts.size(),
                    e);
        }
    }

    private int finishCloses(long now) {
        int finished = 0;
        for (Iterator<Slot> it = closing.iterator(); it.hasNext(); ) {
            Slot slot = it.next();
            if (slot.closeHandle == null || !isClosed(slot.closeHandle)) {
                if (!slot.wedged && now - slot.closeStartNanos > CLOSE_WEDGED_NANOS) {
                    slot.wedged = true;
                    LOG.error(
                            "lane {}: endpoint to {} did not close in {} s; its {} in-flight parts stay pending and"
                                    + " their memory must not be reused",
                            index,
                            slot.connection.peer,
                            CLOSE_WEDGED_NANOS / 1_000_000_000L,
                            slot.parts.size());
                }
                continue;
            }
            it.remove();
            finished++;
            TransferException cause = slot.connection.failure();
            TransferException reason = cause != null ? cause : notConnected(slot.connection);
            for (LanePart part : new ArrayList<>(slot.parts)) {
                part.fail(reason);
            }
            if (slot.openAck != null) {
                slot.openAck.completeExceptionally(reason);
                slot.openAck = null;
            }
            afterClose(slot.endpoint);
            slots.remove(slot.connection);
            slot.connection.laneState.set(index, Connection.CLOSED);
            if (slot.closeAsked) {
                slot.connection.laneClosed();
            }
        }
        return finished;
    }

    private static TransferException notConnected(Connection connection) {
        return new TransferException(Kind.NOT_CONNECTED, "not connected to " + connection.peer);
    }

    /** One connection's endpoint on this lane and the parts in it. */
    private final class Slot implements LanePart.PartOwner {
        final Connection connection;
        final LinkedHashSet<LanePart> parts = new LinkedHashSet<>();
        E endpoint;
        /** Set while the endpoint's probe is outstanding; completed when it answers, fails or closes. */
        CompletableFuture<Void> openAck;

        Object closeHandle;
        long closeStartNanos;
        boolean closing;
        /** The engine sent this connection's Close, which the lane answers once the endpoint has closed. */
        boolean closeAsked;

        boolean wedged;

        Slot(Connection connection) {
            this.connection = connection;
        }

        void opened() {
            if (openAck == null || closing) {
                return;
            }
            connection.laneState.set(index, Connection.OPEN);
            openAck.complete(null);
            openAck = null;
        }

        void failed(TransferException cause) {
            if (!closing) {
                connection.laneState.set(index, Connection.FAILED);
            }
            if (openAck != null) {
                openAck.completeExceptionally(cause);
                openAck = null;
            }
            listener.connectionFailed(connection, cause);
        }

        @Override
        public void partEnded(LanePart part) {
            parts.remove(part);
            connection.laneInFlight.addAndGet(index, -part.ops());
        }
    }
}
