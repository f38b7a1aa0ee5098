package io.pegaflow.server.internode;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.core.engine.BlockIndexListener;
import io.pegaflow.proto.HeartbeatNodeRequest;
import io.pegaflow.proto.HeartbeatNodeResponse;
import io.pegaflow.proto.InsertBlockHashesRequest;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.proto.RemoveBlockHashesRequest;
import io.pegaflow.proto.UnregisterNodeRequest;
import io.pegaflow.server.internode.CommandBatch.Command;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Announces this node's sealed and evicted blocks to the metaserver (spec/cluster.md §2) and keeps its session alive.
 *
 * <p><b>Threads.</b> The engine calls {@link #onSealed}/{@link #onEvicted} from its sealing and eviction paths; they
 * only offer to a bounded queue and return, dropping and counting when it is full, so a slow or dead metaserver
 * never slows Save, Query or Load. One daemon thread owns everything else: heartbeats, batched Insert/Remove calls
 * (each with a deadline), exponential backoff (100 ms doubling to 30 s), and re-announcement.
 *
 * <p><b>Session.</b> The node_id is a random UUID per process start. A refused session (FAILED_PRECONDITION) makes
 * the next command heartbeat again with the same id, as in the reference.
 *
 * <p><b>Re-announcement.</b> Every metaserver response carries its start epoch ({@link EpochCapture}). When it
 * differs from the epoch this client last announced to (a restarted metaserver, a failover, or the first contact),
 * the client walks {@link BlockIndexListener.ResidentBlocks} and re-inserts every resident block in batches. The
 * reference instead leaves them invisible until they are saved again.
 *
 * <p>Owns its channel and thread; {@link #close()} stops the thread, unregisters (3 s deadline) and closes the
 * channel. Spring calls it on shutdown, SIGTERM included.
 */
public final class MetaserverClient implements BlockIndexListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MetaserverClient.class);

    private static final Duration UNREGISTER_TIMEOUT = Duration.ofSeconds(3);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(4);

    private final MetaserverClientSettings settings;
    private final Supplier<ResidentBlocks> resident;
    private final UUID nodeId = UUID.randomUUID();
    private final ManagedChannel channel;
    private final MetaServerGrpc.MetaServerBlockingStub stub;
    private final EpochCapture epochs = new EpochCapture();
    private final ArrayBlockingQueue<Command> queue;
    private final MetaserverClientStats stats = new MetaserverClientStats();
    private final Thread worker;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile boolean stopping;

    // Worker-thread state.
    private boolean registered;
    private volatile boolean everRegistered;
    private long nextHeartbeatNs = System.nanoTime();
    private long backoffNs;
    private long announcedEpoch = EpochCapture.UNKNOWN;
    private volatile boolean failing;
    private volatile String lastFailure = "";

    /** @param resident the engine's resident blocks for re-announcement; may supply null (nothing to re-announce) */
    public MetaserverClient(MetaserverClientSettings settings, Supplier<ResidentBlocks> resident) {
        this.settings = settings;
        this.resident = resident;
        this.channel = ManagedChannelBuilder.forTarget(settings.target())
                .usePlaintext()
                .build();
        this.stub = MetaServerGrpc.newBlockingStub(channel).withInterceptors(epochs);
        this.queue = new ArrayBlockingQueue<>(settings.queueDepth());
        this.backoffNs = settings.initialBackoff().toNanos();
        this.worker = new Thread(this::run, "pega-metaserver-client");
        this.worker.setDaemon(true);
    }

    /** Starts the background thread; the first heartbeat goes out at once. */
    public MetaserverClient start() {
        worker.start();
        log.info(
                "Metaserver client started: metaserver={} node={} node_id={} queue_depth={}",
                settings.target(),
                settings.advertiseAddr(),
                nodeId,
                settings.queueDepth());
        return this;
    }

    public UUID nodeId() {
        return nodeId;
    }

    public String advertiseAddr() {
        return settings.advertiseAddr();
    }

    public MetaserverClientStats stats() {
        return stats;
    }

    /** Where the link to the metaserver stands, for health checks. */
    public enum Link {
        /** No answer yet since start. */
        CONNECTING,
        /** The last call went through. */
        UP,
        /** The last call failed; the client retries with backoff and drops what it would have announced. */
        FAILING,
        /** The metaserver refused this node_id for good: another process took the address over. */
        FENCED
    }

    public Link link() {
        if (failing) {
            return epochs.fenced() ? Link.FENCED : Link.FAILING;
        }
        return everRegistered ? Link.UP : Link.CONNECTING;
    }

    /** The call that failed last and its status ({@code HeartbeatNode: UNAVAILABLE: ...}), or empty. */
    public String lastFailure() {
        return lastFailure;
    }

    /** The metaserver's address as configured. */
    public String target() {
        return settings.target();
    }

    /** The metaserver epoch seen last, or -1 before any answer (or from a metaserver that sends none). */
    public long metaserverEpoch() {
        return epochs.epoch();
    }

    @Override
    public void onSealed(String namespace, List<byte[]> hashes) {
        enqueue(new Command(true, namespace, List.copyOf(hashes)));
    }

    @Override
    public void onEvicted(String namespace, List<byte[]> hashes) {
        enqueue(new Command(false, namespace, List.copyOf(hashes)));
    }

    private void enqueue(Command command) {
        int count = command.hashes().size();
        if (count == 0) {
            return;
        }
        if (!stopping && queue.offer(command)) {
            (command.insert() ? stats.registrationBlocks : stats.removalBlocks).add(count);
            return;
        }
        (command.insert() ? stats.registrationQueueFull : stats.removalQueueFull).add(count);
        log.debug("Metaserver queue full or closed: dropped {} hashes of {}", count, command.namespace());
    }

    // ---------------------------------------------------------------- worker thread

    private void run() {
        while (!stopping) {
            try {
                long waitNs = nextHeartbeatNs - System.nanoTime();
                if (waitNs <= 0) {
                    heartbeat();
                } else {
                    Command first = queue.poll(waitNs, TimeUnit.NANOSECONDS);
                    if (first != null) {
                        List<Command> drained = new ArrayList<>();
                        drained.add(first);
                        queue.drainTo(drained);
                        send(CommandBatch.of(drained));
                    }
                }
                reannounceIfEpochChanged();
            } catch (InterruptedException e) {
                if (stopping) {
                    break;
                }
            } catch (RuntimeException e) {
                // A bug must not kill announcing for the life of the process; the next tick starts clean.
                log.warn("Metaserver client loop failed; continuing", e);
            }
        }
    }

    private boolean heartbeat() {
        try {
            HeartbeatNodeResponse response = call().heartbeatNode(HeartbeatNodeRequest.newBuilder()
                    .setNode(settings.advertiseAddr())
                    .setNodeId(nodeId.toString())
                    .build());
            long periodNs = settings.heartbeatInterval() != null
                    ? settings.heartbeatInterval().toNanos()
                    : TimeUnit.SECONDS.toNanos(Math.max(response.getStaleAfterSecs() / 2, 1));
            nextHeartbeatNs = System.nanoTime() + periodNs;
            backoffNs = settings.initialBackoff().toNanos();
            if (!everRegistered || failing) {
                log.info(
                        "Metaserver session established: node={} node_id={} epoch={}",
                        settings.advertiseAddr(),
                        nodeId,
                        epochs.epoch());
            }
            registered = true;
            everRegistered = true;
            failing = false;
            return true;
        } catch (StatusRuntimeException e) {
            stats.heartbeatFailures.increment();
            failed("HeartbeatNode", e);
            return false;
        }
    }

    private void send(CommandBatch batch) {
        Map<String, List<ByteString>> inserts = batch.inserts();
        Map<String, List<ByteString>> removes = batch.removes();
        boolean inBackoff = !registered && nextHeartbeatNs - System.nanoTime() > 0;
        if (inBackoff || (!registered && !heartbeat())) {
            stats.registrationFailures.add(CommandBatch.count(inserts));
            stats.removalFailures.add(CommandBatch.count(removes));
            return;
        }
        long insertsLeft = CommandBatch.count(inserts);
        for (Map.Entry<String, List<ByteString>> group : inserts.entrySet()) {
            long sent = insert(group.getKey(), group.getValue());
            insertsLeft -= sent;
            if (sent < group.getValue().size()) {
                stats.registrationFailures.add(insertsLeft);
                stats.removalFailures.add(CommandBatch.count(removes));
                return;
            }
        }
        long removesLeft = CommandBatch.count(removes);
        for (Map.Entry<String, List<ByteString>> group : removes.entrySet()) {
            long sent = remove(group.getKey(), group.getValue());
            removesLeft -= sent;
            if (sent < group.getValue().size()) {
                stats.removalFailures.add(removesLeft);
                return;
            }
        }
    }

    private long insert(String namespace, List<ByteString> hashes) {
        return write(true, namespace, hashes);
    }

    private long remove(String namespace, List<ByteString> hashes) {
        return write(false, namespace, hashes);
    }

    /** Sends in chunks of {@code batchSize}; returns how many hashes went through before a failure. */
    private long write(boolean insert, String namespace, List<ByteString> hashes) {
        long sent = 0;
        for (int from = 0; from < hashes.size(); from += settings.batchSize()) {
            List<ByteString> chunk = hashes.subList(from, Math.min(from + settings.batchSize(), hashes.size()));
            try {
                if (insert) {
                    call().insertBlockHashes(InsertBlockHashesRequest.newBuilder()
                            .setNamespace(namespace)
                            .addAllBlockHashes(chunk)
                            .setNode(settings.advertiseAddr())
                            .setNodeId(nodeId.toString())
                            .build());
                } else {
                    call().removeBlockHashes(RemoveBlockHashesRequest.newBuilder()
                            .setNamespace(namespace)
                            .addAllBlockHashes(chunk)
                            .setNode(settings.advertiseAddr())
                            .setNodeId(nodeId.toString())
                            .build());
                }
                sent += chunk.size();
            } catch (StatusRuntimeException e) {
                failed(insert ? "InsertBlockHashes" : "RemoveBlockHashes", e);
                return sent;
            }
        }
        return sent;
    }

    /**
     * After a failed call: heartbeat again once the backoff has passed. Logged when the link goes bad, then quiet
     * until it recovers, so a metaserver outage does not flood the log.
     */
    private void failed(String rpc, StatusRuntimeException e) {
        registered = false;
        Status.Code code = e.getStatus().getCode();
        if (code == Status.Code.FAILED_PRECONDITION) {
            stats.sessionResets.increment();
        }
        if (!failing && epochs.fenced()) {
            log.error(
                    "Metaserver fenced node_id {} at {}: another process took this address over. Restart this"
                            + " server to rejoin the cluster index.",
                    nodeId,
                    settings.advertiseAddr());
        } else if (!failing) {
            log.warn(
                    "Metaserver {} failed ({}: {}); retrying with backoff, blocks announced meanwhile are dropped",
                    rpc,
                    code,
                    e.getStatus().getDescription());
        }
        lastFailure = rpc + ": " + code
                + (e.getStatus().getDescription() == null
                        ? ""
                        : ": " + e.getStatus().getDescription());
        failing = true;
        nextHeartbeatNs = System.nanoTime() + backoffNs;
        backoffNs = Math.min(backoffNs * 2, settings.maxBackoff().toNanos());
    }

    private void reannounceIfEpochChanged() {
        long epoch = epochs.epoch();
        if (!registered || epoch == EpochCapture.UNKNOWN || epoch == announcedEpoch) {
            return;
        }
        ResidentBlocks blocks = resident.get();
        List<Command> batches = new ArrayList<>();
        if (blocks != null) {
            // Collect first: the engine walks its index on this thread, and no RPC should run inside that walk.
            blocks.forEachResident(settings.batchSize(), new BlockIndexListener() {
                @Override
                public void onSealed(String namespace, List<byte[]> hashes) {
                    batches.add(new Command(true, namespace, List.copyOf(hashes)));
                }

                @Override
                public void onEvicted(String namespace, List<byte[]> hashes) {}
            });
        }
        long sent = 0;
        for (Command batch : batches) {
            List<ByteString> hashes =
                    CommandBatch.of(List.of(batch)).inserts().getOrDefault(batch.namespace(), List.of());
            long done = insert(batch.namespace(), hashes);
            sent += done;
            if (done < hashes.size()) {
                return; // retried in full after the next successful call: announcedEpoch is unchanged
            }
        }
        announcedEpoch = epoch;
        stats.reannouncements.increment();
        stats.reannouncedBlocks.add(sent);
        if (sent > 0) {
            log.info("Announced {} resident blocks to metaserver epoch {}", sent, epoch);
        } else {
            log.debug("Metaserver epoch {}: no resident blocks to announce", epoch);
        }
    }

    private MetaServerGrpc.MetaServerBlockingStub call() {
        return stub.withDeadlineAfter(settings.rpcTimeout().toMillis(), TimeUnit.MILLISECONDS);
    }

    // ---------------------------------------------------------------- shutdown

    /** Stops the thread (≤ 4 s), unregisters this session (≤ 3 s) and closes the channel. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        stopping = true;
        worker.interrupt();
        try {
            worker.join(STOP_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        int dropped = queue.size();
        queue.clear();
        if (worker.isAlive()) {
            log.warn("Metaserver client thread did not stop within {}; unregistering anyway", STOP_TIMEOUT);
        }
        if (everRegistered) {
            try {
                long removed = stub.withDeadlineAfter(UNREGISTER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                        .unregisterNode(UnregisterNodeRequest.newBuilder()
                                .setNode(settings.advertiseAddr())
                                .setNodeId(nodeId.toString())
                                .build())
                        .getRemovedOwners();
                log.info("Unregistered from metaserver: node={} removed_owners={}", settings.advertiseAddr(), removed);
            } catch (StatusRuntimeException e) {
                stats.unregisterFailures.increment();
                log.warn("Metaserver UnregisterNode failed: {}; the node goes stale instead", e.getStatus());
            }
        }
        if (dropped > 0) {
            log.debug("Dropped {} queued metaserver batches at shutdown", dropped);
        }
        channel.shutdown();
        try {
            if (!channel.awaitTermination(1, TimeUnit.SECONDS)) {
                channel.shutdownNow();
            }
        } catch (InterruptedException e) {
            channel.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
