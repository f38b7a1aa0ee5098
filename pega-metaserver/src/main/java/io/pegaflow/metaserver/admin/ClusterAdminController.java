package io.pegaflow.metaserver.admin;

import io.pegaflow.metaserver.config.MetaserverProperties;
import io.pegaflow.metaserver.index.BlockIndex;
import io.pegaflow.metaserver.node.FencedSession;
import io.pegaflow.metaserver.node.MetaserverEpoch;
import io.pegaflow.metaserver.node.NodeIdFingerprint;
import io.pegaflow.metaserver.node.NodeRegistry;
import io.pegaflow.metaserver.node.NodeRow;
import io.pegaflow.metaserver.node.NodeSession;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.info.BuildProperties;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.annotation.JsonNaming;

/**
 * {@code GET /api/admin/info} and {@code GET /api/admin/cluster} (docs/admin-api.md): the nodes with liveness, last
 * heartbeat and fencing, the epoch and the blocks indexed, snake_case like the server's admin API. Built from the
 * database (the authority shared by replicas) merged with this process's in-memory liveness and block counts, as
 * {@code /api/nodes} is; node ids appear only as {@link NodeIdFingerprint}s, since a node_id is a write credential.
 */
@RestController
@RequestMapping(path = "/api/admin", produces = MediaType.APPLICATION_JSON_VALUE)
class ClusterAdminController {
    static final long REFRESH_MS = 2000;

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Info(String app, String version, long nowMs, long refreshMs, Map<String, Boolean> subsystems) {}

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Cluster(
            long nowMs,
            long epoch,
            long epochStartedAtMs,
            long staleAfterSecs,
            long ttlMinutes,
            long blockKeys,
            long blockOwners,
            List<Node> nodes,
            List<Fence> fencedSessions) {}

    /** {@code state}: "live" (blocks visible), "stale" (hidden, may revive or be taken over) or "expired". */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Node(
            String node,
            String nodeIdFingerprint,
            String state,
            long registeredAtMs,
            long lastSeenMs,
            long lastSeenAgeMs,
            long ownedBlocks,
            long takeovers,
            List<String> fencedNodeIdFingerprints) {}

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Fence(String nodeIdFingerprint, String node, long fencedAtMs, String supersededByFingerprint) {}

    private final NodeRegistry registry;
    private final BlockIndex index;
    private final MetaserverEpoch epoch;
    private final MetaserverProperties properties;
    private final Clock clock;
    private final ObjectProvider<BuildProperties> build;

    ClusterAdminController(
            NodeRegistry registry,
            BlockIndex index,
            MetaserverEpoch epoch,
            MetaserverProperties properties,
            Clock clock,
            ObjectProvider<BuildProperties> build) {
        this.registry = registry;
        this.index = index;
        this.epoch = epoch;
        this.properties = properties;
        this.clock = clock;
        this.build = build;
    }

    @GetMapping("/info")
    Info info() {
        BuildProperties props = build.getIfAvailable();
        String version = props == null || props.getVersion() == null ? "dev" : props.getVersion();
        return new Info("pega-metaserver", version, clock.millis(), REFRESH_MS, Map.of("cluster", true));
    }

    @GetMapping("/cluster")
    Cluster cluster() {
        long nowMs = clock.millis();
        List<FencedSession> fences = registry.store().loadFencedSessions();
        Map<String, List<String>> fencesByNode = fences.stream()
                .collect(Collectors.groupingBy(
                        FencedSession::url,
                        Collectors.mapping(f -> NodeIdFingerprint.of(f.id()), Collectors.toList())));
        List<Node> nodes = new ArrayList<>();
        for (NodeRow row : registry.store().loadNodes()) {
            NodeSession session = registry.session(row.url())
                    .filter(s -> s.id().equals(row.id()))
                    .orElse(null);
            long lastSeenMs = session == null ? row.lastSeenMs() : Math.max(row.lastSeenMs(), session.lastSeenMs());
            long ageMs = nowMs - lastSeenMs;
            nodes.add(new Node(
                    row.url(),
                    NodeIdFingerprint.of(row.id()),
                    ageMs <= registry.staleAfterMs() ? "live" : ageMs <= registry.ttlMs() ? "stale" : "expired",
                    row.registeredAtMs(),
                    lastSeenMs,
                    ageMs,
                    session == null ? 0 : index.ownedBlocks(session),
                    row.takeovers(),
                    fencesByNode.getOrDefault(row.url(), List.of())));
        }
        List<Fence> fenceViews = fences.stream()
                .map(f -> new Fence(
                        NodeIdFingerprint.of(f.id()), f.url(), f.fencedAtMs(), NodeIdFingerprint.of(f.supersededBy())))
                .toList();
        return new Cluster(
                nowMs,
                epoch.epoch(),
                epoch.startedAtMs(),
                properties.nodeStaleSecs(),
                properties.ttlMinutes(),
                index.keyCount(),
                index.ownerCount(),
                nodes,
                fenceViews);
    }
}
