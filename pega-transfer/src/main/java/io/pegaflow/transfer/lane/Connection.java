package io.pegaflow.transfer.lane;

import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.TransferException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * One handshake's worth of connection to a peer: an endpoint on every lane. It fails once (the first cause wins) and is
 * then closed on every lane; a new handshake makes a new connection, so a late close of an old one never touches its
 * successor.
 */
final class Connection {
    enum State {
        CONNECTING,
        ESTABLISHED,
        DISCONNECTED
    }

    /** Lane endpoint states as the view shows them; index = code. */
    static final String[] LANE_STATES = {"OPENING", "OPEN", "FAILED", "CLOSING", "CLOSED"};

    static final int OPENING = 0;
    static final int OPEN = 1;
    static final int FAILED = 2;
    static final int CLOSING = 3;
    static final int CLOSED = 4;

    final PeerId peer;
    final HandshakeDescriptor remote;
    /** Past it a lane whose endpoint has not answered its probe gives up (clock of the engine). */
    final long connectDeadlineNanos;

    private final AtomicReference<TransferException> failure = new AtomicReference<>();
    private volatile State state = State.CONNECTING;
    /** Completes when every lane has closed its endpoint, after the connection failed. */
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    /** Lanes that have not yet answered the connection's close. */
    private final AtomicInteger lanesOpen;

    private int rotation;
    final AtomicIntegerArray laneState;
    final AtomicLongArray laneInFlight;
    final AtomicLongArray laneIssued;

    Connection(PeerId peer, HandshakeDescriptor remote, long connectDeadlineNanos) {
        this.peer = peer;
        this.remote = remote;
        this.connectDeadlineNanos = connectDeadlineNanos;
        int lanes = remote.lanes();
        laneState = new AtomicIntegerArray(lanes);
        laneInFlight = new AtomicLongArray(lanes);
        laneIssued = new AtomicLongArray(lanes);
        lanesOpen = new AtomicInteger(lanes);
    }

    State state() {
        return state;
    }

    void established() {
        if (failure.get() == null) {
            state = State.ESTABLISHED;
        }
    }

    /** Records the cause; true only for the first call, which must then close the connection on every lane. */
    boolean fail(TransferException cause) {
        if (!failure.compareAndSet(null, cause)) {
            return false;
        }
        state = State.DISCONNECTED;
        return true;
    }

    /** The failure that ended this connection, or null while it has none. */
    @Nullable
    TransferException failure() {
        return failure.get();
    }

    /** A lane has closed (or never had) its endpoint of this connection; called once per lane. */
    void laneClosed() {
        if (lanesOpen.decrementAndGet() == 0) {
            closed.complete(null);
        }
    }

    /** Completes when the lanes have closed the connection's endpoints (never before it failed). */
    CompletableFuture<Void> closed() {
        return closed;
    }

    /** The lane the next batch starts at, so small batches rotate over all lanes. */
    synchronized int nextRotation() {
        int r = rotation;
        rotation = (r + 1) % remote.lanes();
        return r;
    }
}
