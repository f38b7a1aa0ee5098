package io.pegaflow.server.internode;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.core.engine.BlockIndexListener;
import io.pegaflow.core.engine.BlockIndexListener.ResidentBlocks;
import io.pegaflow.kernel.agent.Agent;
import io.pegaflow.proto.HeartbeatNodeRequest;
import io.pegaflow.proto.HeartbeatNodeResponse;
import io.pegaflow.proto.InsertBlockHashesRequest;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.proto.RemoveBlockHashesRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The metaserver client's one thread, as an {@link Agent}: each duty cycle heartbeats when the
 * {@link MetaserverSession} says so, sends what the {@link AnnouncementQueue} holds as batched Insert/Remove calls
 * (each with a deadline), and re-announces every resident block when the metaserver's epoch changed. Every call's
 * outcome goes back to the session, which decides backoff, link state and fencing.
 *
 * <p>An unexpected exception in a cycle is logged and the next cycle starts clean: losing announcements for the life
 * of the process to one bug would be worse than the bug (the reference's client loop does the same).
 */
final class MetaserverClientAgent implements Agent {
    private static final Logger LOG = LoggerFactory.getLogger(MetaserverClientAgent.class);

    private final MetaserverClientSettings settings;
    private final UUID nodeId;
    private final MetaserverEndpoints endpoints;
    /** The endpoint of the latest call, which a failure is charged to. */
    private MetaserverEndpoints.Endpoint called;
    /** Moves since the last successful heartbeat; a full round of dead instances falls back to the backoff. */
    private int failoversSinceSuccess;

    private final EpochCapture epochs;
    private final MetaserverSession session;
    private final AnnouncementQueue queue;
    private final MetaserverClientStats stats;
    private final Supplier<@Nullable ResidentBlocks> resident;

    MetaserverClientAgent(
            MetaserverClientSettings settings,
            UUID nodeId,
            MetaserverEndpoints endpoints,
            EpochCapture epochs,
            MetaserverSession session,
            AnnouncementQueue queue,
            MetaserverClientStats stats,
            Supplier<@Nullable ResidentBlocks> resident) {
        this.settings = settings;
        this.nodeId = nodeId;
        this.endpoints = endpoints;
        this.called = endpoints.current();
        this.epochs = epochs;
        this.session = session;
        this.queue = queue;
        this.stats = stats;
        this.resident = resident;
    }

    @Override
    public String roleName() {
        return "pega-metaserver-client";
    }

    @Override
    public int doWork() {
        try {
            int work = 0;
            if (session.heartbeatDue()) {
                heartbeat();
                work++;
            }
            var batch = queue.drain();
            if (batch.isPresent()) {
                send(batch.get());
                work++;
            }
            if (reannounceIfEpochChanged()) {
                work++;
            }
            return work;
        } catch (RuntimeException e) {
            LOG.warn("Metaserver client cycle failed; continuing", e);
            return 0;
        }
    }

    private boolean heartbeat() {
        try {
            HeartbeatNodeResponse response = call().heartbeatNode(HeartbeatNodeRequest.newBuilder()
                    .setNode(settings.advertiseAddr())
                    .setNodeId(nodeId.toString())
                    .build());
            failoversSinceSuccess = 0;
            if (session.heartbeatSucceeded(response.getStaleAfterSecs())) {
                LOG.info(
                        "Metaserver session established: node={} node_id={} epoch={}",
                        settings.advertiseAddr(),
                        nodeId,
                        epochs.epoch());
            }
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
        if (session.inBackoff() || (!session.registered() && !heartbeat())) {
            stats.registrationFailures.add(CommandBatch.count(inserts));
            stats.removalFailures.add(CommandBatch.count(removes));
            return;
        }
        long insertsLeft = CommandBatch.count(inserts);
        for (Map.Entry<String, List<ByteString>> group : inserts.entrySet()) {
            long sent = write(true, group.getKey(), group.getValue());
            insertsLeft -= sent;
            if (sent < group.getValue().size()) {
                stats.registrationFailures.add(insertsLeft);
                stats.removalFailures.add(CommandBatch.count(removes));
                return;
            }
        }
        long removesLeft = CommandBatch.count(removes);
        for (Map.Entry<String, List<ByteString>> group : removes.entrySet()) {
            long sent = write(false, group.getKey(), group.getValue());
            removesLeft -= sent;
            if (sent < group.getValue().size()) {
                stats.removalFailures.add(removesLeft);
                return;
            }
        }
    }

    /** Sends in chunks of {@code batchSize}; returns how many hashes went through before a failure. */
    private long write(boolean insert, String namespace, List<ByteString> hashes) {
        long sent = 0;
        boolean retried = false;
        for (int from = 0; from < hashes.size(); ) {
            List<ByteString> chunk = hashes.subList(from, Math.min(from + settings.batchSize(), hashes.size()));
            try {
                writeChunk(insert, namespace, chunk);
                sent += chunk.size();
                from += chunk.size();
            } catch (StatusRuntimeException e) {
                boolean movedOn = failed(insert ? "InsertBlockHashes" : "RemoveBlockHashes", e);
                // Inserts and removes are idempotent: after moving to another instance, register there at once and
                // send this chunk again (once), so the batch met by the outage is not lost to the switch.
                if (movedOn && !retried && heartbeat()) {
                    retried = true;
                    continue;
                }
                return sent;
            }
        }
        return sent;
    }

    private void writeChunk(boolean insert, String namespace, List<ByteString> chunk) {
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
    }

    /**
     * After a failed call: the session backs off, and an unreachable instance is left for the next address. Logged
     * when the link goes bad, then quiet until it recovers, so a metaserver outage does not flood the log. Returns
     * whether the client moved to another address.
     */
    private boolean failed(String rpc, StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        String description = e.getStatus().getDescription();
        boolean refused = code == Status.Code.FAILED_PRECONDITION;
        if (refused) {
            stats.sessionResets.increment();
        }
        MetaserverSession.Failure failure = session.callFailed(
                rpc + ": " + code + (description == null ? "" : ": " + description), refused, epochs.fenced());
        MetaserverEndpoints.Endpoint next = endpoints.failedOver(called, code);
        if (next != null) {
            // The session is lost with the instance: the next command heartbeats (re-registers) there first, and the
            // epoch it answers decides whether the resident blocks must be announced again.
            stats.failovers.increment();
            if (++failoversSinceSuccess < endpoints.targets().size()) {
                session.retryNow();
            }
            LOG.warn(
                    "Metaserver {} unreachable ({} on {}): failing over to {}",
                    called.target(),
                    code,
                    rpc,
                    next.target());
            return true;
        }
        if (failure.firstOfStreak() && failure.fenced()) {
            LOG.error(
                    "Metaserver fenced node_id {} at {}: another process took this address over. Restart this"
                            + " server to rejoin the cluster index.",
                    nodeId,
                    settings.advertiseAddr());
        } else if (failure.firstOfStreak()) {
            LOG.warn(
                    "Metaserver {} failed ({}: {}); retrying with backoff, blocks announced meanwhile are dropped",
                    rpc,
                    code,
                    description);
        }
        return false;
    }

    /** Re-inserts every resident block after an epoch change; returns whether it tried. */
    private boolean reannounceIfEpochChanged() {
        long epoch = epochs.epoch();
        if (!session.needsAnnouncementTo(epoch)) {
            return false;
        }
        List<Announcement> batches = residentBatches();
        long sent = 0;
        for (Announcement batch : batches) {
            List<ByteString> hashes = CommandBatch.byteStrings(batch.hashes());
            long done = write(true, batch.namespace(), hashes);
            sent += done;
            if (done < hashes.size()) {
                return true; // retried in full after the next successful call: the epoch stays unannounced
            }
        }
        session.announcedTo(epoch);
        stats.reannouncements.increment();
        stats.reannouncedBlocks.add(sent);
        if (sent > 0) {
            LOG.info("Announced {} resident blocks to metaserver epoch {}", sent, epoch);
        } else {
            LOG.debug("Metaserver epoch {}: no resident blocks to announce", epoch);
        }
        return true;
    }

    /** Collects first: the engine walks its index on this thread, and no RPC should run inside that walk. */
    private List<Announcement> residentBatches() {
        ResidentBlocks blocks = resident.get();
        List<Announcement> batches = new ArrayList<>();
        if (blocks != null) {
            blocks.forEachResident(settings.batchSize(), new BlockIndexListener() {
                @Override
                public void onSealed(String namespace, List<byte[]> hashes) {
                    batches.add(new Announcement.Sealed(namespace, List.copyOf(hashes)));
                }

                @Override
                public void onEvicted(String namespace, List<byte[]> hashes) {}
            });
        }
        return batches;
    }

    private MetaServerGrpc.MetaServerBlockingStub call() {
        called = endpoints.current();
        return called.stub().withDeadlineAfter(settings.rpcTimeout().toMillis(), TimeUnit.MILLISECONDS);
    }
}
