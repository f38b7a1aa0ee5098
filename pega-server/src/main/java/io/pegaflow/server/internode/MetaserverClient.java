package io.pegaflow.server.internode;

import com.google.protobuf.ByteString;
import io.grpc.StatusRuntimeException;
import io.pegaflow.core.engine.BlockIndexListener;
import io.pegaflow.edge.access.ClusterChannels;
import io.pegaflow.edge.access.ClusterCredential;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.proto.NodePrefixResult;
import io.pegaflow.proto.QueryPrefixBlocksRequest;
import io.pegaflow.proto.UnregisterNodeRequest;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Announces this node's sealed and evicted blocks to the metaserver ({@code docs/metaserver.md}) and keeps its session
 * alive. Three parts, one concern each:
 *
 * <ul>
 *   <li>{@link AnnouncementQueue}: the engine calls {@link #onSealed}/{@link #onEvicted} from its sealing and eviction
 *       paths; they only offer to a bounded queue and return, dropping and counting when it is full, so a slow or
 *       dead metaserver never slows Save, Query or Load;
 *   <li>{@link MetaserverSession}: the session as a state machine on the injected clock (heartbeat schedule,
 *       exponential backoff from 100 ms doubling to 30 s, link state, fencing, the epoch last announced to);
 *   <li>{@link MetaserverClientAgent}: the one thread (an agent on an {@link AgentRunner}) that heartbeats, sends
 *       batched Insert/Remove calls (each with a deadline) and re-announces resident blocks.
 * </ul>
 *
 * <p><b>Session.</b> The node_id is a random UUID per process start. A refused session (FAILED_PRECONDITION) makes
 * the next command heartbeat again with the same id, as in the reference.
 *
 * <p><b>Re-announcement.</b> Every metaserver response carries its start epoch ({@link EpochCapture}). When it
 * differs from the epoch this client last announced to (a restarted metaserver, a failover, or the first contact),
 * the agent walks {@link BlockIndexListener.ResidentBlocks} and re-inserts every resident block in batches. The
 * reference instead leaves them invisible until they are saved again.
 *
 * <p>Owns its channel and its agent; {@link #start()} starts the agent, {@link #close()} stops it, unregisters (3 s
 * deadline) and closes the channel. Spring calls it on shutdown, SIGTERM included.
 */
public final class MetaserverClient implements BlockIndexListener, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MetaserverClient.class);

    private static final Duration UNREGISTER_TIMEOUT = Duration.ofSeconds(3);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(4);

    private final MetaserverClientSettings settings;
    private final UUID nodeId = UUID.randomUUID();
    private final EpochCapture epochs = new EpochCapture();
    private final MetaserverEndpoints endpoints;
    private final MetaserverClientStats stats = new MetaserverClientStats();
    private final MetaserverSession session;
    private final AnnouncementQueue queue;
    private final AgentRunner runner;
    private final AgentGroup agents;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** With the system clock, its agent tracked by no group (tests). */
    public MetaserverClient(MetaserverClientSettings settings, Supplier<@Nullable ResidentBlocks> resident) {
        this(settings, resident, NanoClock.SYSTEM, new AgentGroup());
    }

    /**
     * @param resident the engine's resident blocks for re-announcement; may supply null (nothing to re-announce)
     * @param clock the session's time source
     * @param agents where the client's agent is reported, so that its death turns health DOWN
     */
    public MetaserverClient(
            MetaserverClientSettings settings,
            Supplier<@Nullable ResidentBlocks> resident,
            NanoClock clock,
            AgentGroup agents) {
        this(settings, resident, clock, agents, ClusterChannels.plaintext(ClusterCredential.of("")));
    }

    /**
     * @param cluster how to dial the metaserver: plaintext or TLS, with the cluster credential its node writes need
     *     when it has one
     */
    public MetaserverClient(
            MetaserverClientSettings settings,
            Supplier<@Nullable ResidentBlocks> resident,
            NanoClock clock,
            AgentGroup agents,
            ClusterChannels cluster) {
        this.settings = settings;
        this.agents = agents;
        this.endpoints = new MetaserverEndpoints(settings.targets(), epochs, cluster);
        this.session = new MetaserverSession(
                clock, settings.heartbeatInterval(), settings.initialBackoff(), settings.maxBackoff());
        this.queue = new AnnouncementQueue(settings.queueDepth(), stats);
        MetaserverClientAgent agent =
                new MetaserverClientAgent(settings, nodeId, endpoints, epochs, session, queue, stats, resident);
        // The bound on an idle wait is how late a heartbeat or the end of a backoff can be noticed.
        this.runner = new AgentRunner(
                agent, queue.idleStrategy(settings.initialBackoff().toNanos()));
    }

    /** Starts the agent; the first heartbeat goes out at once. */
    public MetaserverClient start() {
        agents.add(runner.start());
        LOG.info(
                "Metaserver client started: metaserver={} node={} node_id={} queue_depth={}",
                String.join(",", endpoints.targets()),
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

    public MetaserverLink link() {
        return session.link();
    }

    /** The call that failed last and its status ({@code HeartbeatNode: UNAVAILABLE: ...}), or empty. */
    public String lastFailure() {
        return session.lastFailure();
    }

    /** The metaserver address calls go to now (one of {@code pega.metaserver.addr}'s). */
    public String target() {
        return endpoints.current().target();
    }

    /** The metaserver epoch seen last, or -1 before any answer (or from a metaserver that sends none). */
    public long metaserverEpoch() {
        return epochs.epoch();
    }

    @Override
    public void onSealed(String namespace, List<byte[]> hashes) {
        queue.offer(new Announcement.Sealed(namespace, List.copyOf(hashes)));
    }

    @Override
    public void onEvicted(String namespace, List<byte[]> hashes) {
        queue.offer(new Announcement.Evicted(namespace, List.copyOf(hashes)));
    }

    /**
     * QueryPrefixBlocks: every owner of a leading run of {@code hashes} with its length, for the remote tier. A plain
     * call with a deadline on the caller's thread, outside the announcement agent.
     *
     * @throws io.grpc.StatusRuntimeException when the metaserver does not answer in time or refuses
     */
    public List<NodePrefixResult> queryPrefix(String namespace, List<byte[]> hashes, Duration timeout) {
        QueryPrefixBlocksRequest.Builder request =
                QueryPrefixBlocksRequest.newBuilder().setNamespace(namespace);
        for (byte[] h : hashes) {
            request.addBlockHashes(ByteString.copyFrom(h));
        }
        QueryPrefixBlocksRequest built = request.build();
        MetaserverEndpoints.Endpoint endpoint = endpoints.current();
        try {
            return query(endpoint, built, timeout);
        } catch (StatusRuntimeException e) {
            // One more try on the next address when this one is gone; the agent re-registers there on its own.
            MetaserverEndpoints.Endpoint next =
                    endpoints.failedOver(endpoint, e.getStatus().getCode());
            if (next == null) {
                throw e;
            }
            stats.failovers.increment();
            LOG.warn(
                    "Metaserver {} unreachable ({} on QueryPrefixBlocks): failing over to {}",
                    endpoint.target(),
                    e.getStatus().getCode(),
                    next.target());
            return query(next, built, timeout);
        }
    }

    private static List<NodePrefixResult> query(
            MetaserverEndpoints.Endpoint endpoint, QueryPrefixBlocksRequest request, Duration timeout) {
        return endpoint.stub()
                .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .queryPrefixBlocks(request)
                .getNodesList();
    }

    /** Stops the agent (≤ 4 s), unregisters this session (≤ 3 s) and closes the channel. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        int dropped = queue.close();
        if (!runner.close(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            LOG.warn("Metaserver client agent did not stop within {}; unregistering anyway", STOP_TIMEOUT);
        }
        agents.remove(runner);
        if (session.everRegistered()) {
            unregister();
        }
        if (dropped > 0) {
            LOG.debug("Dropped {} queued metaserver batches at shutdown", dropped);
        }
        endpoints.close();
    }

    private void unregister() {
        try {
            long removed = endpoints
                    .current()
                    .stub()
                    .withDeadlineAfter(UNREGISTER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .unregisterNode(UnregisterNodeRequest.newBuilder()
                            .setNode(settings.advertiseAddr())
                            .setNodeId(nodeId.toString())
                            .build())
                    .getRemovedOwners();
            LOG.info("Unregistered from metaserver: node={} removed_owners={}", settings.advertiseAddr(), removed);
        } catch (StatusRuntimeException e) {
            stats.unregisterFailures.increment();
            LOG.warn("Metaserver UnregisterNode failed: {}; the node goes stale instead", e.getStatus());
        }
    }
}
