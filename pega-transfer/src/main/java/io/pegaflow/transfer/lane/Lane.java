package io.pegaflow.transfer.lane;

import io.pegaflow.kernel.agent.Agent;
import io.pegaflow.kernel.agent.CommandQueue;
import io.pegaflow.kernel.agent.IdleStrategy;
import io.pegaflow.kernel.agent.NanoClock;
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
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection lane: a worker of the fabric (a {@code UcpWorker}), the endpoints it holds to every connected peer,
 * and the {@link Agent} whose thread (an {@code AgentRunner}'s) is the only one ever to touch them. Other threads talk
 * to it through two queues: a bounded {@link CommandQueue} for batches (back-pressure: {@link Kind#BUSY}) and an
 * unbounded one for the rare control commands (open, close, shutdown), so a close is never lost to a full queue.
 *
 * <p>{@link #doWork()} is a sum of bounded steps: drain commands, issue at most {@value #OPS_PER_CYCLE} operations,
 * progress the worker, expire deadlines, finish closes. A subclass supplies
 * the fabric-specific pieces; every one of them is called on the lane thread.
 *
 * <p>Endpoint lifecycle per connection (the reference's prepare/complete/abort/invalidate map to it):
 * {@code OPENING -> OPEN -> CLOSING -> CLOSED}, with {@code FAILED} shown while a failed endpoint waits for its close.
 * A part (the batch's operations on this lane) ends either by the fabric's completion report, confirmed after the
 * progress step it came in (see {@link #confirmFlushed()}), or, when its endpoint closes, with the connection's
 * failure; never earlier, because until the endpoint is closed the fabric may still write into the part's memory.
 *
 * @param <E> the fabric's endpoint handle
 */
public abstract class Lane<E> implements Agent {
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
    private final CommandQueue<Queued> submits = new CommandQueue<>(Queued.class, SUBMIT_CAPACITY);
    private final Queue<Control> controls = new ConcurrentLinkedQueue<>();
    private final Map<Connection, Slot> slots = new HashMap<>(); // Connection has identity equality
    private final ArrayDeque<LanePart> issuing = new ArrayDeque<>();
    private final List<Slot> closing = new ArrayList<>();
    /** Parts the fabric reported complete in this cycle, confirmed once its progress step is over. */
    private final List<LanePart> flushed = new ArrayList<>();

    // set by attach() before the lane runs; null until then
    private @Nullable LaneListener listener;
    private @Nullable NanoClock clock;
    private @Nullable IdleStrategy idle;
    private long lastScanNanos;
    private long failedCycles;
    private boolean shuttingDown;
    /** Set by {@link #shutdown()}: from then on a cycle reports work until every endpoint is closed (see doWork). */
    private volatile boolean shutdownRequested;

    private volatile boolean stopped;
    /** Set once the loop ended with every endpoint closed and the worker released: the fabric may go next. */
    private volatile boolean released;

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

    /**
     * Starts closing the endpoint. Returns what {@link #isClosed} polls.
     *
     * @param gentle whether the fabric may close it gently (flushing first): nothing of this lane is outstanding on it
     *     (no operation, no connection probe) and the close is this node's decision, not a peer's failure or a missed
     *     deadline; otherwise the close must be forced (outstanding operations cancelled, the peer not waited for)
     */
    protected abstract Object beginClose(E endpoint, boolean gentle);

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

    /** What the bounded batch queue carries: {@link LanePart}s (CommandQueue takes a sealed command type). */
    sealed interface Queued permits LanePart {}

    private sealed interface Control permits Open, Close, Shutdown {}

    private record Open(Connection connection, CompletableFuture<Void> ack) implements Control {}

    private record Close(Connection connection) implements Control {}

    private record Shutdown() implements Control {}

    final void attach(LaneListener listener, NanoClock clock, IdleStrategy idle) {
        this.listener = listener;
        this.clock = clock;
        this.idle = idle;
    }

    private NanoClock clock() {
        return Objects.requireNonNull(clock, "the lane runs only after attach()");
    }

    private LaneListener listener() {
        return Objects.requireNonNull(listener, "the lane runs only after attach()");
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
        shutdownRequested = true;
        control(new Shutdown());
    }

    /** False when the lane's batch queue is full; a part that races with the lane's end is failed, not lost. */
    final boolean submit(LanePart part) {
        CommandQueue.Offer offer = submits.offer(part);
        if (offer == CommandQueue.Offer.FULL) {
            return false;
        }
        if (offer == CommandQueue.Offer.CLOSED) {
            part.fail(closedError());
        }
        wake();
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
        IdleStrategy i = idle;
        if (i != null) {
            i.wake();
        }
    }

    // ---------------------------------------------------------------- the agent (lane thread)

    @Override
    public final void onStart() {
        lastScanNanos = clock().nanoTime();
    }

    /** Whether the loop ended cleanly: every endpoint closed, the worker released. Any thread. */
    final boolean isReleased() {
        return released;
    }

    /** Whether the lane has shut down and closed every endpoint. */
    final boolean isDone() {
        return shuttingDown && slots.isEmpty();
    }

    @Override
    public final String roleName() {
        return "pega-transfer-lane-" + index;
    }

    /**
     * One duty cycle. A failing call into the fabric is logged (rate-limited) and the loop goes on: a lane must keep
     * closing its endpoints even when one call failed, and an agent whose {@code doWork} throws is stopped by its
     * runner. Once a shutdown is requested the cycle reports work until every endpoint is closed, so the runner's
     * stop (which waits for a cycle without work) cannot end the loop under a live endpoint.
     */
    @Override
    public final int doWork() {
        int work;
        try {
            work = drainControls() + drainSubmits() + issueSome();
            work += progress();
            work += confirmFlushed();
            long now = clock().nanoTime();
            if (now - lastScanNanos >= DEADLINE_SCAN_NANOS) {
                lastScanNanos = now;
                work += expire(now);
            }
            work += finishCloses(now);
        } catch (RuntimeException e) {
            failedCycles++;
            if (Long.bitCount(failedCycles) == 1) { // 1st, 2nd, 4th, 8th...: a stuck failure cannot flood the log
                LOG.error("{}: cycle failed ({} so far)", roleName(), failedCycles, e);
            }
            work = 1;
        }
        return shutdownRequested && !isDone() ? Math.max(1, work) : work;
    }

    /**
     * After the loop: release the worker and answer whatever raced with the end. A lane stopped with endpoints still
     * open (its runner gave up, or an Error escaped) keeps its worker: destroying it under a live endpoint aborts UCX.
     */
    @Override
    public final void onClose() {
        stopped = true;
        if (slots.isEmpty()) {
            release();
            released = true;
        } else {
            LOG.error("{}: stopped with {} endpoints open; leaving its worker in place", roleName(), slots.size());
        }
        drainAfterStop();
    }

    private static TransferException closedError() {
        return new TransferException(Kind.CLOSED, "transfer engine is closed");
    }

    private synchronized void drainAfterStop() {
        TransferException closed = closedError();
        for (Queued q : submits.close()) {
            ((LanePart) q).fail(closed);
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
        E endpoint;
        try {
            endpoint = open(
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
        slot.endpoint = endpoint;
        slot.openAck = ack;
        slots.put(connection, slot);
        probe(endpoint, slot::opened, slot::failed);
    }

    /**
     * Ends the parts the fabric reported complete during this cycle. A part whose connection failed, or whose endpoint
     * began closing, meanwhile is failed instead: UCX reports the purge of a failed endpoint's flush as a success and
     * calls the error handler right after, in the same progress call, so only a success that outlived the progress
     * step is one whose bytes all arrived.
     */
    private int confirmFlushed() {
        int n = flushed.size();
        for (int i = 0; i < n; i++) {
            LanePart part = flushed.get(i);
            Slot slot = slotOf(part);
            TransferException failure = slot.connection.failure();
            if (failure == null && slot.closing) {
                failure = notConnected(slot.connection);
            }
            part.confirm(failure);
        }
        flushed.clear();
        return n;
    }

    private int drainSubmits() {
        return submits.drain(q -> accept((LanePart) q), COMMANDS_PER_CYCLE);
    }

    private void accept(LanePart part) {
        Connection connection = part.submission.connection;
        Slot slot = slots.get(connection);
        if (slot == null || slot.closing || slot.openAck != null || connection.failure() != null) {
            TransferException cause = connection.failure();
            part.fail(cause != null ? cause : notConnected(connection));
            return;
        }
        part.slot = slot;
        slot.parts.add(part);
        connection.laneInFlight.addAndGet(index, part.ops());
        issuing.add(part);
    }

    private int issueSome() {
        int budget = OPS_PER_CYCLE;
        while (budget > 0 && !issuing.isEmpty()) {
            LanePart part = issuing.peek();
            Slot slot = slotOf(part);
            if (part.isDone() || slot.closing || slot.connection.failure() != null) {
                issuing.poll(); // ends when its endpoint has closed
                continue;
            }
            int before = part.nextIssue;
            try {
                while (budget > 0 && part.nextIssue < part.ops()) {
                    issue(slot.endpoint(), part, part.nextIssue++);
                    budget--;
                }
                slot.connection.laneIssued.addAndGet(index, part.nextIssue - before);
                if (part.nextIssue < part.ops()) {
                    return OPS_PER_CYCLE - budget;
                }
                issuing.poll();
                issued(slot.endpoint(), part);
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
        return (Slot) Objects.requireNonNull(part.slot, "a part in issuing was taken by this lane");
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
        slot.closeStartNanos = clock().nanoTime();
        slot.connection.laneState.set(index, Connection.CLOSING);
        closing.add(slot);
        try {
            slot.closeHandle = beginClose(slot.endpoint(), mayCloseGently(slot));
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

    private boolean mayCloseGently(Slot slot) {
        TransferException cause = slot.connection.failure();
        return slot.parts.isEmpty()
                && slot.openAck == null
                && (cause == null || cause.kind() == Kind.CLOSED || cause.kind() == Kind.NOT_CONNECTED);
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
            afterClose(slot.endpoint());
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
        /** Set right after the slot is made (its failure callback is needed to make the endpoint), before it is used. */
        @Nullable
        E endpoint;
        /** Set while the endpoint's probe is outstanding; completed when it answers, fails or closes. */
        @Nullable
        CompletableFuture<Void> openAck;

        /** What {@link #isClosed} polls once a close began; null before, or when beginning it failed. */
        @Nullable
        Object closeHandle;

        long closeStartNanos;
        boolean closing;
        /** The engine sent this connection's Close, which the lane answers once the endpoint has closed. */
        boolean closeAsked;

        boolean wedged;

        Slot(Connection connection) {
            this.connection = connection;
        }

        E endpoint() {
            return Objects.requireNonNull(endpoint, "a slot is in the table only with its endpoint");
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
            listener().connectionFailed(connection, cause);
        }

        @Override
        public void partFlushed(LanePart part) {
            flushed.add(part);
        }

        @Override
        public void partEnded(LanePart part) {
            parts.remove(part);
            connection.laneInFlight.addAndGet(index, -part.ops());
        }
    }
}
