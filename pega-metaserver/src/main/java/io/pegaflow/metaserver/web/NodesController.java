package io.pegaflow.metaserver.web;

import io.pegaflow.metaserver.config.MetaserverProperties;
import io.pegaflow.metaserver.index.BlockIndex;
import io.pegaflow.metaserver.node.FencedSession;
import io.pegaflow.metaserver.node.MetaserverEpoch;
import io.pegaflow.metaserver.node.NodeIdFingerprint;
import io.pegaflow.metaserver.node.NodeRegistry;
import io.pegaflow.metaserver.node.NodeRow;
import io.pegaflow.metaserver.node.NodeSession;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /api/nodes}: every registered node with its liveness and fencing state, for the admin UI. Read from the
 * database (the authority shared by replicas) and merged with this process's in-memory liveness and block counts.
 * Node ids appear only as {@link NodeIdFingerprint}s: a node_id is its node's write credential.
 */
@RestController
class NodesController {

    /** The whole document. */
    record NodesView(
            long epoch,
            Instant epochStartedAt,
            long staleAfterSecs,
            long ttlMinutes,
            long blockKeys,
            long blockOwners,
            List<NodeView> nodes,
            List<FenceView> fencedSessions) {}

    /**
     * One address. {@code state} is "live" (blocks visible), "stale" (hidden, may revive or be taken over) or
     * "expired" (to be swept).
     */
    record NodeView(
            String node,
            String nodeIdFingerprint,
            String state,
            Instant registeredAt,
            Instant lastSeen,
            long lastSeenAgeMs,
            long ownedBlocks,
            long takeovers,
            List<String> fencedNodeIdFingerprints) {}

    /** A node_id refused for good because another session took its address. */
    record FenceView(String nodeIdFingerprint, String node, Instant fencedAt, String supersededByFingerprint) {}

    private final NodeRegistry registry;
    private final BlockIndex index;
    private final MetaserverEpoch epoch;
    private final MetaserverProperties properties;
    private final Clock clock;

    NodesController(
            NodeRegistry registry,
            BlockIndex index,
            MetaserverEpoch epoch,
            MetaserverProperties properties,
            Clock clock) {
        this.registry = registry;
        this.index = index;
        this.epoch = epoch;
        this.properties = properties;
        this.clock = clock;
    }

    @GetMapping("/api/nodes")
    NodesView nodes() {
        long nowMs = clock.millis();
        List<FencedSession> fences = registry.store().loadFencedSessions();
        Map<String, List<String>> fencesByNode = fences.stream()
                .collect(Collectors.groupingBy(
                        FencedSession::url,
                        Collectors.mapping(f -> NodeIdFingerprint.of(f.id()), Collectors.toList())));
        List<NodeView> nodes = new ArrayList<>();
        for (NodeRow row : registry.store().loadNodes()) {
            NodeSession session = registry.session(row.url())
                    .filter(s -> s.id().equals(row.id()))
                    .orElse(null);
            long lastSeenMs = session == null ? row.lastSeenMs() : Math.max(row.lastSeenMs(), session.lastSeenMs());
            long ageMs = nowMs - lastSeenMs;
            nodes.add(new NodeView(
                    row.url(),
                    NodeIdFingerprint.of(row.id()),
                    ageMs <= registry.staleAfterMs() ? "live" : ageMs <= registry.ttlMs() ? "stale" : "expired",
                    Instant.ofEpochMilli(row.registeredAtMs()),
                    Instant.ofEpochMilli(lastSeenMs),
                    ageMs,
                    session == null ? 0 : index.ownedBlocks(session),
                    row.takeovers(),
                    fencesByNode.getOrDefault(row.url(), List.of())));
        }
        List<FenceView> fenceViews = fences.stream()
                .map(f -> new FenceView(
                        NodeIdFingerprint.of(f.id()),
                        f.url(),
                        Instant.ofEpochMilli(f.fencedAtMs()),
                        NodeIdFingerprint.of(f.supersededBy())))
                .toList();
        return new NodesView(
                epoch.epoch(),
                Instant.ofEpochMilli(epoch.startedAtMs()),
                properties.nodeStaleSecs(),
                properties.ttlMinutes(),
                index.keyCount(),
                index.ownerCount(),
                nodes,
                fenceViews);
    }
}
