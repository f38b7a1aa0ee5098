package io.pegaflow.metaserver.index;

import com.google.protobuf.ByteString;
import io.pegaflow.metaserver.node.NodeRegistry;
import io.pegaflow.metaserver.node.NodeSession;
import io.pegaflow.metaserver.node.SessionRejectedException;
import java.time.Clock;
import java.util.List;
import java.util.UUID;

/**
 * The metaserver's operations with the reference's semantics: node lifecycle from the {@link NodeRegistry}, block
 * ownership from the {@link BlockIndex}. The gRPC service validates requests and delegates here.
 *
 * <p>As in the reference, the registry and the index are not updated transactionally: a write that passed the fence
 * just before a takeover lands under the superseded session and is invisible from then on. Thread-safe.
 */
public final class MetaStore {

    private final NodeRegistry registry;
    private final BlockIndex index;
    private final Clock clock;

    public MetaStore(NodeRegistry registry, BlockIndex index, Clock clock) {
        this.registry = registry;
        this.index = index;
        this.clock = clock;
    }

    public NodeRegistry.HeartbeatOutcome heartbeat(String node, UUID nodeId) throws SessionRejectedException {
        return registry.heartbeat(node, nodeId);
    }

    /** Fences, then records {@code node} as an owner of every hash; returns {@code hashes.size()}. */
    public int insert(String namespace, List<ByteString> hashes, String node, UUID nodeId)
            throws SessionRejectedException {
        NodeSession session = registry.touch(node, nodeId);
        return index.insert(namespace, hashes, session, clock.millis());
    }

    /** Fences, then removes {@code node}'s records written under {@code nodeId}; returns how many. */
    public int remove(String namespace, List<ByteString> hashes, String node, UUID nodeId)
            throws SessionRejectedException {
        registry.touch(node, nodeId);
        return index.remove(namespace, hashes, node, nodeId);
    }

    public List<PrefixMatch> queryPrefix(String namespace, List<ByteString> hashes) {
        return index.queryPrefix(namespace, hashes, clock.millis());
    }

    /** Ends the session, then drops every record it wrote; returns the number of records dropped. */
    public long unregister(String node, UUID nodeId) throws SessionRejectedException {
        registry.unregister(node, nodeId);
        return index.removeOwners(node, nodeId);
    }

    /**
     * One lifecycle sweep. Nodes go first, so the records of a node swept now are dropped in the same pass instead
     * of one interval later.
     */
    public SweepStats sweep(long fenceRetentionMs) {
        int removedNodes = registry.sweepExpired(fenceRetentionMs);
        SweepStats blocks = index.sweep(clock.millis());
        return new SweepStats(blocks.removedOwners(), blocks.removedKeys(), removedNodes);
    }

    public NodeRegistry registry() {
        return registry;
    }

    public BlockIndex index() {
        return index;
    }
}
