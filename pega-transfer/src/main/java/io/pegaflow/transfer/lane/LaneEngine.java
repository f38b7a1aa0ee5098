package io.pegaflow.transfer.lane;

import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.agent.TaskAgents;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.PeerView;
import io.pegaflow.transfer.TransferBatch;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferException;
import io.pegaflow.transfer.TransferException.Kind;
import io.pegaflow.transfer.TransferResult;
import io.pegaflow.transfer.TransferView;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link TransferEngine} over any {@link Fabric}: the peer table, the validation of every operation against both
 * sides' region tables, the spreading of a batch over the lanes, failure propagation and the counters. What differs
 * between UCX and the loopback is only what a lane does with an operation, so both run this code and one contract
 * test covers both.
 *
 * <p>Spreading (the reference's WQE-level round robin, #291): batch operation {@code k} goes to lane
 * {@code (r + k) mod N}, where {@code r} rotates by one per batch and per peer, so a large batch fills all N lanes and
 * a stream of one-operation batches still visits every lane in turn.
 */
public final class LaneEngine implements TransferEngine, LaneListener {
    private static final Logger LOG = LoggerFactory.getLogger(LaneEngine.class);
    /** How long close waits for the lanes to close their endpoints and stop. */
    static final long CLOSE_TIMEOUT_NANOS = 15_000_000_000L;
    /** Batch completions that may wait for the completion agent; every in-flight batch has at most one. */
    private static final int COMPLETION_QUEUE = 4096;

    private final Fabric fabric;
    private final NanoClock clock;
    private final Executor completions;
    /** The completion agent this engine started because none was handed in; null when the owner gave one. */
    private final @Nullable TaskAgents ownCompletions;

    private final HandshakeDescriptor local;
    private final List<Lane<?>> lanes;
    private final List<AgentRunner> runners = new ArrayList<>();
    private final Map<PeerId, Connection> connections = new ConcurrentHashMap<>();
    private final Map<PeerId, PeerStats> stats = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Takes ownership of the fabric and starts one thread per lane.
     *
     * @param completions where batch futures complete (never a lane thread while it has room); null: the engine starts
     *     its own completion agent ({@code pega-transfer-complete-0}) and stops it last at {@link #close()}
     */
    public LaneEngine(Fabric fabric, NanoClock clock, @Nullable Executor completions) {
        this.fabric = fabric;
        this.clock = clock;
        if (completions == null) {
            this.ownCompletions =
                    new TaskAgents("pega-transfer-complete", 1, COMPLETION_QUEUE, clock).start(new AgentGroup());
            // a full completion queue runs the completion on the lane: late rather than lost
            this.completions = ownCompletions.orCallerRuns();
        } else {
            this.ownCompletions = null;
            this.completions = completions;
        }
        this.lanes = List.copyOf(fabric.lanes());
        List<byte[]> addresses = new ArrayList<>(lanes.size());
        for (Lane<?> lane : lanes) {
            addresses.add(lane.address());
        }
        try {
            this.local = new HandshakeDescriptor(
                    fabric.kind(), fabric.instanceId(), addresses, fabric.nics().size(), fabric.regions());
        } catch (RuntimeException e) {
            // nothing started yet: release the workers here, then the fabric, so a refused setup leaks nothing
            lanes.forEach(Lane::release);
            fabric.release();
            if (ownCompletions != null) {
                ownCompletions.close(5, TimeUnit.SECONDS);
            }
            throw new TransferException(Kind.INIT_FAILED, "transfer engine: " + e.getMessage(), e);
        }
        for (Lane<?> lane : lanes) {
            BackoffIdle idle = new BackoffIdle();
            lane.attach(this, clock, idle);
            runners.add(new AgentRunner(lane, idle));
        }
        runners.forEach(AgentRunner::start);
    }

    @Override
    public HandshakeDescriptor localDescriptor() {
        return local;
    }

    @Override
    public int lanes() {
        return lanes.size();
    }

    @Override
    public CompletableFuture<Void> connect(PeerId peer, HandshakeDescriptor remote, long timeoutNanos) {
        checkOpen();
        local.checkCompatible(remote);
        Connection connection = new Connection(peer, remote, clock.nanoTime() + timeoutNanos);
        PeerStats peerStats = statsOf(peer);
        Connection previous = connections.put(peer, connection);
        if (previous != null) {
            fail(
                    previous,
                    new TransferException(
                            Kind.NOT_CONNECTED, "connection to " + peer + " replaced by a new" + " handshake"));
        }
        List<CompletableFuture<Void>> acks = new ArrayList<>(lanes.size());
        for (Lane<?> lane : lanes) {
            acks.add(lane.open(connection));
        }
        CompletableFuture<Void> result = new CompletableFuture<>();
        @SuppressWarnings("FutureReturnValueIgnored") // the outcome travels through result, completed in both branches
        CompletableFuture<Void> unused = CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new))
                .whenComplete((ok, error) -> {
                    if (error == null && connection.failure() == null) {
                        connection.established();
                        peerStats.connects.increment();
                        completions.execute(() -> result.complete(null));
                        return;
                    }
                    // the connection's first failure says why; a lane's own error may only be its probe cancelled by
                    // the close
                    TransferException cause = connection.failure() != null ? connection.failure() : unwrap(error);
                    fail(connection, cause);
                    completions.execute(() -> result.completeExceptionally(cause));
                });
        return result;
    }

    @Override
    public boolean isConnected(PeerId peer) {
        Connection c = connections.get(peer);
        return c != null && c.state() == Connection.State.ESTABLISHED;
    }

    @Override
    public CompletableFuture<Void> disconnect(PeerId peer) {
        Connection c = connections.get(peer);
        if (c == null) {
            return CompletableFuture.completedFuture(null);
        }
        fail(c, new TransferException(Kind.NOT_CONNECTED, "disconnected from " + peer));
        return c.closed().thenApplyAsync(v -> null, completions);
    }

    @Override
    public CompletableFuture<TransferResult> submit(PeerId peer, TransferBatch batch, long timeoutNanos) {
        checkOpen();
        Connection connection = connections.get(peer);
        if (connection == null || connection.state() != Connection.State.ESTABLISHED) {
            TransferException failed = connection == null ? null : connection.failure();
            PeerStats peerStats = stats.get(peer);
            String last = failed != null
                    ? Objects.requireNonNullElse(
                            failed.getMessage(), failed.kind().toString())
                    : peerStats != null ? peerStats.lastError() : "";
            throw new TransferException(
                    Kind.NOT_CONNECTED,
                    "not connected to " + peer + (last.isEmpty() ? "" : " (last failure: " + last + ")"));
        }
        if (batch.isEmpty()) {
            return CompletableFuture.completedFuture(new TransferResult(batch.direction(), 0, 0, new BitSet(), null));
        }
        int[] remoteRegion = resolve(connection, batch);
        PeerStats peerStats = statsOf(peer);
        Submission submission =
                new Submission(batch, remoteRegion, connection, peerStats, clock, timeoutNanos, completions);
        int n = lanes.size();
        int rotation = connection.nextRotation();
        List<LanePart> parts = new ArrayList<>(n);
        for (int lane = 0; lane < n; lane++) {
            // ops k with (rotation + k) mod n == lane
            int first = Math.floorMod(lane - rotation, n);
            if (first < batch.size()) {
                parts.add(new LanePart(submission, lane, first, n, (batch.size() - first + n - 1) / n));
            }
        }
        submission.expectParts(parts.size());
        peerStats.inFlightOps.add(batch.size());
        for (LanePart part : parts) {
            if (!lanes.get(part.lane).submit(part)) {
                part.reject(new TransferException(
                        Kind.BUSY, "lane " + part.lane + " has " + Lane.SUBMIT_CAPACITY + " batches queued"));
            }
        }
        return submission.future();
    }

    /** Checks every operation against both region tables before anything is issued. */
    private int[] resolve(Connection connection, TransferBatch batch) {
        int[] remoteRegion = new int[batch.size()];
        for (int k = 0; k < batch.size(); k++) {
            long length = batch.lengthBytes(k);
            if (local.regionIndexOf(batch.localAddress(k), length) < 0) {
                throw invalidRange(k, "local", batch.localAddress(k), length, "registered region of this node");
            }
            int region = connection.remote.regionIndexOf(batch.remoteAddress(k), length);
            if (region < 0) {
                throw invalidRange(
                        k, "remote", batch.remoteAddress(k), length, "region " + connection.peer + " registered");
            }
            remoteRegion[k] = region;
        }
        return remoteRegion;
    }

    private static TransferException invalidRange(int op, String side, long address, long length, String where) {
        return new TransferException(
                Kind.INVALID_ARGUMENT,
                String.format(
                        "operation %d: %s range [0x%x, +%d) is not inside a %s", op, side, address, length, where));
    }

    @Override
    public void connectionFailed(Connection connection, TransferException cause) {
        fail(connection, cause);
    }

    /** Drops a connection on every lane, once; the first cause wins and is counted. */
    private void fail(Connection connection, TransferException cause) {
        // Under the connection's lock, so that a later caller (the connect's completion, after another lane's failure
        // won) returns only once the connection is out of the map: a failed connect must not leave it in the view.
        synchronized (connection) {
            if (!connection.fail(cause)) {
                return;
            }
            // The cause is recorded before the connection leaves the map: a submit that no longer finds it reports
            // why.
            statsOf(connection.peer).connectionDropped(cause);
            connections.remove(connection.peer, connection);
        }
        if (cause.kind() != Kind.NOT_CONNECTED && cause.kind() != Kind.CLOSED) {
            LOG.warn("dropping connection to {}: {}", connection.peer, cause.getMessage());
        }
        for (Lane<?> lane : lanes) {
            lane.close(connection);
        }
    }

    @Override
    public TransferView view() {
        Map<PeerId, PeerView> peers = new TreeMap<>((a, b) -> a.address().compareTo(b.address()));
        stats.forEach((peer, s) -> peers.put(peer, peerView(peer, s, connections.get(peer))));
        long registeredBytes = 0;
        for (var r : local.regions()) {
            registeredBytes += r.lengthBytes();
        }
        return new TransferView(
                fabric.kind().toString(),
                fabric.nics(),
                fabric.transports(),
                lanes.size(),
                local.regions().size(),
                registeredBytes,
                closed.get(),
                new ArrayList<>(peers.values()));
    }

    private static PeerView peerView(PeerId peer, PeerStats s, @Nullable Connection c) {
        List<PeerView.LaneView> laneViews = new ArrayList<>();
        String state = "DISCONNECTED";
        if (c != null) {
            state = c.state().name();
            for (int i = 0; i < c.laneState.length(); i++) {
                laneViews.add(new PeerView.LaneView(
                        i, Connection.LANE_STATES[c.laneState.get(i)], c.laneInFlight.get(i), c.laneIssued.get(i)));
            }
        }
        return new PeerView(
                peer,
                state,
                laneViews,
                s.connects.sum(),
                s.drops.sum(),
                s.inFlightOps.sum(),
                s.batches.sum(),
                s.opsCompleted.sum(),
                s.opsFailed.sum(),
                s.bytesRead.sum(),
                s.bytesWritten.sum(),
                s.errorCounts(),
                s.lastError(),
                s.latency.percentileMicros(0.50),
                s.latency.percentileMicros(0.99),
                s.latency.maxMicros());
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        TransferException cause = new TransferException(Kind.CLOSED, "transfer engine is closed");
        for (Connection c : new ArrayList<>(connections.values())) {
            fail(c, cause);
        }
        lanes.forEach(Lane::shutdown);
        // a real wait on threads, not a domain timer: wall time even when the engine runs on a test clock
        long deadline = System.nanoTime() + CLOSE_TIMEOUT_NANOS;
        boolean stopped = true;
        for (int i = 0; i < runners.size(); i++) {
            stopped &= runners.get(i).close(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
                    && lanes.get(i).isReleased();
        }
        if (stopped) {
            fabric.release();
        } else {
            LOG.error(
                    "transfer lanes did not stop in {} s; leaving UCX memory and context in place",
                    CLOSE_TIMEOUT_NANOS / 1_000_000_000L);
            fabric.abandon();
        }
        if (ownCompletions != null) {
            // last: the failures completed above may still be queued for it
            ownCompletions.close(5, TimeUnit.SECONDS);
        }
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new TransferException(Kind.CLOSED, "transfer engine is closed");
        }
    }

    private PeerStats statsOf(PeerId peer) {
        return stats.computeIfAbsent(peer, p -> new PeerStats());
    }

    private static TransferException unwrap(Throwable t) {
        Throwable c = t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
        return c instanceof TransferException te
                ? te
                : new TransferException(Kind.PEER_FAILED, "connect failed: " + c, c);
    }
}
