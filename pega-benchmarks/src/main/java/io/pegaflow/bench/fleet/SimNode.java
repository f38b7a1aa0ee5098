package io.pegaflow.bench.fleet;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.pegaflow.bench.fleet.FleetStats.Rpc;
import io.pegaflow.proto.HeartbeatNodeRequest;
import io.pegaflow.proto.HeartbeatNodeResponse;
import io.pegaflow.proto.InsertBlockHashesRequest;
import io.pegaflow.proto.InsertBlockHashesResponse;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.proto.NodePrefixResult;
import io.pegaflow.proto.QueryPrefixBlocksRequest;
import io.pegaflow.proto.QueryPrefixBlocksResponse;
import io.pegaflow.proto.RemoveBlockHashesRequest;
import io.pegaflow.proto.RemoveBlockHashesResponse;
import io.pegaflow.proto.UnregisterNodeRequest;
import io.pegaflow.proto.UnregisterNodeResponse;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One simulated PegaFlow server, speaking to the metaserver as pega-server's client does: a random node_id per process
 * life; the first heartbeat at once, then every half of the returned {@code stale_after_secs}; sealed and evicted
 * blocks offered to a bounded queue ({@code --queue-depth} batches, refused when full and counted); one write in
 * flight at a time, draining the queue into one net operation per hash (last wins) sent as Insert then Remove in
 * chunks of {@code --batch-size}; nothing retried; a {@code FAILED_PRECONDITION} makes the next call a heartbeat; a new
 * epoch makes it re-announce every resident block. Requests come at the model's rate, each with its prefix queries.
 *
 * <p>Beside the server's behaviour it keeps {@link #announced}, the records the metaserver should hold for its current
 * session, and checks every acknowledged Remove and the final Unregister against it.
 *
 * <p>A crash stops everything at once (no Unregister, callbacks of the dead life ignored); the restart takes a new
 * node_id at the same address, is refused until the old session is stale, takes over, and then checks that a write
 * with the old node_id is refused (the fence). All state is guarded by the node's monitor.
 */
final class SimNode {

    private static final long INITIAL_BACKOFF_MS = 100;
    private static final long MAX_BACKOFF_MS = 30_000;
    private static final long UNREGISTER_DEADLINE_SECONDS = 120;

    private final int index;
    private final String address;
    private final FleetContext fleet;
    private final FleetStats stats;
    private final SplittableRandom random;
    private final ArrayDeque<Batch> queue = new ArrayDeque<>();
    /** The server's resident blocks in LRU order (access order). */
    private final LinkedHashMap<Long, Boolean> resident = new LinkedHashMap<>(64, 0.75f, true);
    /** What the metaserver holds for this session, as far as acknowledgements tell. */
    private final Set<Long> announced = new HashSet<>();

    private int target;
    private UUID nodeId = UUID.randomUUID();
    private @Nullable UUID supersededId;
    private int life;
    private boolean alive = true;
    private boolean registered;
    private boolean rejoining;
    private boolean sending;
    private long backoffMs = INITIAL_BACKOFF_MS;
    private long backoffUntilNanos;
    private long epoch;
    private long announcedEpoch;
    private boolean stopped;

    private record Batch(List<Long> inserts, List<Long> removes) {}

    /** One write of a plan: an Insert or a Remove chunk. */
    private record Write(boolean insert, List<Long> ids, boolean reannouncement) {}

    SimNode(int index, FleetContext fleet, long seed) {
        this.index = index;
        this.fleet = fleet;
        this.stats = fleet.stats;
        this.random = new SplittableRandom(seed);
        this.address = "10." + ((index >> 16) & 0xFF) + "." + ((index >> 8) & 0xFF) + "." + (index & 0xFF) + ":50055";
        this.target = index % fleet.targets();
    }

    String address() {
        return address;
    }

    synchronized boolean live() {
        return alive && registered;
    }

    synchronized boolean idle() {
        return !sending && queue.isEmpty();
    }

    /** Joins: the first heartbeat now, the first request after it. */
    synchronized void start(long nowNanos) {
        heartbeat(life);
        scheduleRequest(nowNanos);
    }

    private MetaServerGrpc.MetaServerStub stub() {
        int myLife = life;
        return fleet.stub(target, index)
                .withDeadlineAfter(fleet.rpcTimeoutMillis(), TimeUnit.MILLISECONDS)
                .withOption(EpochHeader.SINK, e -> onEpoch(myLife, e));
    }

    // ---- requests ----------------------------------------------------------------------------------------------

    private void scheduleRequest(long fromNanos) {
        double rate = fleet.model.requestsPerNodePerSecond() * burstFactor(fromNanos);
        long gap = (long) (-Math.log(1 - random.nextDouble()) / rate * 1e9);
        int myLife = life;
        fleet.scheduler.at(fromNanos + gap, () -> request(myLife));
    }

    private double burstFactor(long nanos) {
        long every = fleet.options.burstEveryDuration().toNanos();
        if (every <= 0) {
            return 1;
        }
        return Math.floorMod(nanos, every) < fleet.options.burstLengthDuration().toNanos()
                ? fleet.options.burstFactor
                : 1;
    }

    private synchronized void request(int forLife) {
        if (forLife != life || !alive || stopped) {
            return;
        }
        scheduleRequest(System.nanoTime());
        if (!registered) {
            stats.add(stats.requestsWithoutSession, 1);
            return;
        }
        stats.add(stats.requests, 1);
        FleetModel model = fleet.model;
        int prefix = fleet.prefixPopularity.sample(random);
        List<Long> prompt = new ArrayList<>(model.blocksPerRequest());
        for (int j = 0; j < model.sharedBlocks(); j++) {
            prompt.add(FleetContext.sharedBlock(prefix, j));
        }
        for (int j = 0; j < model.uniqueBlocks(); j++) {
            prompt.add(fleet.uniqueBlock());
        }
        // The server asks the metaserver only for what follows its local prefix.
        int local = 0;
        while (local < prompt.size() && resident.containsKey(prompt.get(local))) {
            local++;
        }
        if (local < prompt.size()) {
            List<Long> remaining = prompt.subList(local, prompt.size());
            for (int q = 0; q < fleet.options.queriesPerRequest; q++) {
                query(remaining);
            }
        }
        List<Long> sealed = new ArrayList<>();
        for (long id : prompt) {
            if (resident.get(id) == null) {
                resident.put(id, Boolean.TRUE);
                sealed.add(id);
            }
        }
        List<Long> evicted = new ArrayList<>();
        Iterator<Long> oldest = resident.keySet().iterator();
        while (resident.size() > fleet.options.residentBlocks && oldest.hasNext()) {
            evicted.add(oldest.next());
            oldest.remove();
        }
        offer(new Batch(sealed, evicted));
        pump();
    }

    private void offer(Batch batch) {
        if (batch.inserts().isEmpty() && batch.removes().isEmpty()) {
            return;
        }
        if (queue.size() >= fleet.options.queueDepth) {
            stats.insertsQueueFull.add(batch.inserts().size());
            stats.removesQueueFull.add(batch.removes().size());
            return;
        }
        queue.addLast(batch);
    }

    private void query(List<Long> ids) {
        long start = System.nanoTime();
        int size = ids.size();
        stub().queryPrefixBlocks(
                        QueryPrefixBlocksRequest.newBuilder()
                                .setNamespace(fleet.options.namespace)
                                .addAllBlockHashes(FleetContext.hashes(ids))
                                .build(),
                        observer(
                                Rpc.QUERY,
                                start,
                                (QueryPrefixBlocksResponse r) -> {
                                    int best = 0;
                                    for (NodePrefixResult n : r.getNodesList()) {
                                        if (!n.getNode().equals(address)) {
                                            best = Math.max(best, n.getPrefixLen());
                                        }
                                    }
                                    stats.add(stats.queries, 1);
                                    stats.add(stats.queriedBlocks, size);
                                    stats.add(stats.remoteHitBlocks, best);
                                },
                                status -> {}));
    }

    // ---- writes --------------------------------------------------------------------------------------------------

    /** Starts the next write plan when none is in flight: a re-announcement first, else what the queue holds. */
    private void pump() {
        if (sending || !alive || !registered) {
            return;
        }
        List<Write> plan = new ArrayList<>();
        boolean reannounce = announcedEpoch != epoch;
        if (reannounce) {
            List<Long> all = new ArrayList<>(resident.keySet());
            for (int from = 0; from < all.size(); from += fleet.options.batchSize) {
                plan.add(new Write(
                        true, all.subList(from, Math.min(all.size(), from + fleet.options.batchSize)), true));
            }
            if (plan.isEmpty()) {
                announcedEpoch = epoch;
            }
        }
        if (plan.isEmpty()) {
            if (queue.isEmpty()) {
                return;
            }
            Map<Long, Boolean> net = new LinkedHashMap<>();
            for (Batch b; (b = queue.pollFirst()) != null; ) {
                b.inserts().forEach(id -> net.put(id, Boolean.TRUE));
                b.removes().forEach(id -> net.put(id, Boolean.FALSE));
            }
            List<Long> inserts = new ArrayList<>();
            List<Long> removes = new ArrayList<>();
            net.forEach((id, insert) -> (insert ? inserts : removes).add(id));
            if (System.nanoTime() - backoffUntilNanos < 0) {
                // The server drops what it meets while backing off after a failure.
                stats.insertsFailed.add(inserts.size());
                stats.removesFailed.add(removes.size());
                return;
            }
            chunk(plan, true, inserts);
            chunk(plan, false, removes);
        }
        sending = true;
        write(plan, 0, life);
    }

    private void chunk(List<Write> plan, boolean insert, List<Long> ids) {
        for (int from = 0; from < ids.size(); from += fleet.options.batchSize) {
            plan.add(new Write(insert, ids.subList(from, Math.min(ids.size(), from + fleet.options.batchSize)), false));
        }
    }

    private void write(List<Write> plan, int step, int forLife) {
        Write w = plan.get(step);
        long start = System.nanoTime();
        Runnable next = () -> {
            synchronized (this) {
                if (forLife != life) {
                    return;
                }
                if (step + 1 < plan.size()) {
                    write(plan, step + 1, forLife);
                } else {
                    if (w.reannouncement()) {
                        announcedEpoch = epoch;
                        stats.reannouncements.increment();
                    }
                    sending = false;
                    pump();
                }
            }
        };
        Consumer<Status> failed = status -> {
            synchronized (this) {
                if (forLife != life) {
                    return;
                }
                for (int i = step; i < plan.size(); i++) {
                    Write lost = plan.get(i);
                    if (!lost.reannouncement()) {
                        (lost.insert() ? stats.insertsFailed : stats.removesFailed)
                                .add(lost.ids().size());
                    }
                }
                callFailed(status);
                sending = false;
                pump();
            }
        };
        List<com.google.protobuf.ByteString> hashes = FleetContext.hashes(w.ids());
        if (w.insert()) {
            stub().insertBlockHashes(
                            InsertBlockHashesRequest.newBuilder()
                                    .setNamespace(fleet.options.namespace)
                                    .addAllBlockHashes(hashes)
                                    .setNode(address)
                                    .setNodeId(nodeId.toString())
                                    .build(),
                            observer(
                                    Rpc.INSERT,
                                    start,
                                    (InsertBlockHashesResponse r) -> {
                                        synchronized (this) {
                                            if (forLife == life) {
                                                announced.addAll(w.ids());
                                                stats.add(
                                                        stats.insertedBlocks,
                                                        w.ids().size());
                                            }
                                        }
                                        next.run();
                                    },
                                    failed));
        } else {
            stub().removeBlockHashes(
                            RemoveBlockHashesRequest.newBuilder()
                                    .setNamespace(fleet.options.namespace)
                                    .addAllBlockHashes(hashes)
                                    .setNode(address)
                                    .setNodeId(nodeId.toString())
                                    .build(),
                            observer(
                                    Rpc.REMOVE,
                                    start,
                                    (RemoveBlockHashesResponse r) -> {
                                        synchronized (this) {
                                            if (forLife == life) {
                                                int expected = 0;
                                                for (long id : w.ids()) {
                                                    if (announced.remove(id)) {
                                                        expected++;
                                                    }
                                                }
                                                if (r.getRemovedCount() < expected) {
                                                    stats.removeMismatches.add(expected - r.getRemovedCount());
                                                }
                                                stats.add(
                                                        stats.removedBlocks,
                                                        w.ids().size());
                                            }
                                        }
                                        next.run();
                                    },
                                    failed));
        }
    }

    /** The session's reaction to a failed call, as pega-server's MetaserverSession decides it. */
    private void callFailed(Status status) {
        if (status.getCode() == Status.Code.FAILED_PRECONDITION) {
            registered = false;
            heartbeatAfter(0);
            return;
        }
        if (status.getCode() == Status.Code.UNAVAILABLE && fleet.targets() > 1) {
            target = (target + 1) % fleet.targets();
        }
        backoffUntilNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMs);
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
    }

    // ---- session -------------------------------------------------------------------------------------------------

    private void heartbeatAfter(long millis) {
        int myLife = life;
        fleet.scheduler.at(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis), () -> heartbeat(myLife));
    }

    private synchronized void heartbeat(int forLife) {
        if (forLife != life || !alive || stopped) {
            return;
        }
        long start = System.nanoTime();
        stub().heartbeatNode(
                        HeartbeatNodeRequest.newBuilder()
                                .setNode(address)
                                .setNodeId(nodeId.toString())
                                .build(),
                        observer(
                                Rpc.HEARTBEAT,
                                start,
                                (HeartbeatNodeResponse r) -> heartbeatAccepted(forLife, r.getStaleAfterSecs()),
                                status -> heartbeatFailed(forLife, status)));
    }

    private synchronized void heartbeatAccepted(int forLife, long staleAfterSecs) {
        if (forLife != life) {
            return;
        }
        registered = true;
        backoffMs = INITIAL_BACKOFF_MS;
        backoffUntilNanos = System.nanoTime();
        if (rejoining) {
            rejoining = false;
            stats.rejoins.increment();
            UUID old = supersededId;
            if (old != null) {
                checkFenced(old);
            }
        }
        heartbeatAfter(Math.max(1, staleAfterSecs / 2) * 1000);
        pump();
    }

    private synchronized void heartbeatFailed(int forLife, Status status) {
        if (forLife != life) {
            return;
        }
        registered = false;
        if (status.getCode() == Status.Code.FAILED_PRECONDITION && rejoining) {
            stats.rejoinRefusals.increment();
        } else if (status.getCode() == Status.Code.UNAVAILABLE && fleet.targets() > 1) {
            target = (target + 1) % fleet.targets();
        }
        long wait = backoffMs;
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
        heartbeatAfter(wait);
    }

    private void onEpoch(int forLife, long value) {
        synchronized (this) {
            if (forLife == life) {
                epoch = value;
            }
        }
    }

    /** A write from the dead process, carrying the superseded node_id: the metaserver must refuse it. */
    private void checkFenced(UUID old) {
        long start = System.nanoTime();
        fleet.stub(target, index)
                .withDeadlineAfter(fleet.rpcTimeoutMillis(), TimeUnit.MILLISECONDS)
                .insertBlockHashes(
                        InsertBlockHashesRequest.newBuilder()
                                .setNamespace(fleet.options.namespace)
                                .addBlockHashes(FleetContext.hash(fleet.uniqueBlock()))
                                .setNode(address)
                                .setNodeId(old.toString())
                                .build(),
                        observer(
                                Rpc.INSERT,
                                start,
                                (InsertBlockHashesResponse r) -> stats.fenceViolations.increment(),
                                status -> {
                                    if (status.getCode() == Status.Code.FAILED_PRECONDITION) {
                                        stats.fencedWritesRefused.increment();
                                    } else {
                                        stats.insertsFailed.increment();
                                    }
                                }));
    }

    // ---- churn and shutdown ----------------------------------------------------------------------------------------

    /** The process dies: no Unregister, nothing in flight counts any more, the queue is lost with it. */
    synchronized void crash(long restartAfterNanos) {
        life++;
        alive = false;
        registered = false;
        sending = false;
        queue.clear();
        stats.crashes.increment();
        fleet.scheduler.at(System.nanoTime() + restartAfterNanos, this::restart);
    }

    /** Records the crashed session left behind at the metaserver (invisible, purged by its sweep). */
    private synchronized void restart() {
        if (stopped) {
            return;
        }
        supersededId = nodeId;
        nodeId = UUID.randomUUID();
        resident.clear();
        announced.clear();
        life++;
        alive = true;
        rejoining = true;
        backoffMs = INITIAL_BACKOFF_MS;
        announcedEpoch = 0;
        epoch = 0;
        heartbeat(life);
        scheduleRequest(System.nanoTime());
    }

    /** Stops making requests and heartbeats; queued writes still go out. */
    synchronized void stop() {
        stopped = true;
    }

    /**
     * UnregisterNode, checking that the metaserver dropped exactly the records this session announced. Completes
     * when answered (or at once for a node without a session).
     */
    synchronized CompletableFuture<Void> unregister() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (!alive || !registered) {
            done.complete(null);
            return done;
        }
        int expected = announced.size();
        long start = System.nanoTime();
        // a long deadline: the call scans the metaserver's whole index, and the count is what is checked here
        fleet.stub(target, index)
                .withDeadlineAfter(UNREGISTER_DEADLINE_SECONDS, TimeUnit.SECONDS)
                .unregisterNode(
                        UnregisterNodeRequest.newBuilder()
                                .setNode(address)
                                .setNodeId(nodeId.toString())
                                .build(),
                        observer(
                                Rpc.UNREGISTER,
                                start,
                                (UnregisterNodeResponse r) -> {
                                    if (r.getRemovedOwners() != expected) {
                                        stats.unregisterMismatches.add(Math.abs(r.getRemovedOwners() - expected));
                                    }
                                    done.complete(null);
                                },
                                status -> done.complete(null)));
        return done;
    }

    /**
     * Records of this session the metaserver should hold, for the report's cross-check; 0 for a node without a live
     * session, which sends no Unregister.
     */
    synchronized int announcedRecords() {
        return alive && registered ? announced.size() : 0;
    }

    private <T> StreamObserver<T> observer(Rpc rpc, long start, Consumer<T> ok, Consumer<Status> failed) {
        return new StreamObserver<>() {
            private @Nullable T value;

            @Override
            public void onNext(T v) {
                value = v;
            }

            @Override
            public void onError(Throwable t) {
                Status status = Status.fromThrowable(t);
                stats.call(rpc, start, status.getCode());
                failed.accept(status);
            }

            @Override
            public void onCompleted() {
                stats.call(rpc, start, Status.Code.OK);
                T v = value;
                if (v != null) {
                    ok.accept(v);
                }
            }
        };
    }
}
