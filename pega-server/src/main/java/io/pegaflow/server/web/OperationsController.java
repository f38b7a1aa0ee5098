package io.pegaflow.server.web;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.pegaflow.core.engine.CleanupResult;
import io.pegaflow.core.engine.InstanceSummary;
import io.pegaflow.core.engine.MemoryCleanupResult;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.edge.access.AdminAccess;
import io.pegaflow.edge.access.AdmissionValve;
import io.pegaflow.push.PushEngine;
import io.pegaflow.server.config.PoolHealthIndicator;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * The reference's HTTP operations surface ({@code pegaflow-server/src/http_server.rs} of novitalabs/pegaflow v0.22.4)
 * with its paths and JSON shapes. Mutating endpoints ask the one {@link AdminAccess} rule (a loopback socket peer, or
 * {@code Authorization: Bearer
 * <pega.admin.token>}); the reference served them to anyone. {@link AdmissionValve} has refused a caller the rule
 * would refuse before any body was read; parameters come from the query string only.
 */
@RestController
class OperationsController {
    static final String DENIED = AdmissionValve.DENIED;
    private static final Logger LOG = LoggerFactory.getLogger(OperationsController.class);
    private final PegaEngine engine;
    private final PrometheusMeterRegistry prometheus;
    private final AdminAccess access;
    private final ObjectProvider<PushEngine> push;

    OperationsController(
            PegaEngine engine,
            PrometheusMeterRegistry prometheus,
            AdminAccess access,
            ObjectProvider<PushEngine> push) {
        this.engine = engine;
        this.push = push;
        this.prometheus = prometheus;
        this.access = access;
    }

    /**
     * The reference's {@code ok}; {@code degraded: <component>: <reason>} (still 200: the server answers) while the
     * pool is pinned or a share of the P/D push's request slots is used up, both reasons when both.
     */
    @GetMapping(path = "/health", produces = MediaType.TEXT_PLAIN_VALUE)
    String health() {
        List<String> degraded = new ArrayList<>(2);
        String pinned = PoolHealthIndicator.pinnedReason(engine);
        if (pinned != null) {
            degraded.add("pool: " + pinned);
        }
        PushEngine p = push.getIfAvailable();
        String slots = p == null ? null : p.slotSaturation();
        if (slots != null) {
            degraded.add("pd: " + slots);
        }
        return degraded.isEmpty() ? "ok" : "degraded: " + String.join("; ", degraded);
    }

    @GetMapping(path = "/metrics", produces = "text/plain; version=0.0.4; charset=utf-8")
    String metrics() {
        return prometheus.scrape();
    }

    /**
     * The reference's {@code {"instances": [ids]}}, plus {@code connectors}: per instance, the connector version and
     * generation it registered with, its storage groups and whether it is hybrid (additions the reference's readers
     * ignore).
     */
    @GetMapping(path = "/instances", produces = MediaType.APPLICATION_JSON_VALUE)
    Map<String, Object> instances() {
        Map<String, Map<String, Object>> connectors = new TreeMap<>();
        for (InstanceSummary s : engine.status().instanceSummaries()) {
            connectors.put(
                    s.id(),
                    Map.of(
                            "client_version",
                            s.clientVersion(),
                            "generation",
                            s.generation(),
                            "groups",
                            s.groupLayers().size(),
                            "hybrid",
                            s.hybrid()));
        }
        Map<String, Object> body = new LinkedHashMap<>(); // the reference's key first
        body.put("instances", engine.instanceIds());
        body.put("connectors", connectors);
        return body;
    }

    @PostMapping(path = "/instances/cleanup")
    ResponseEntity<?> cleanupInstances(HttpServletRequest request) {
        ResponseEntity<?> denied = authorize(request);
        if (denied != null) {
            return denied;
        }
        String id = queryParameter(request, "id");
        CleanupResult result = engine.cleanupInstances(id);
        if (result == null) {
            return ResponseEntity.status(HttpStatus.NOT_FOUND)
                    .contentType(MediaType.TEXT_PLAIN)
                    .body("instance " + id + " not found");
        }
        LOG.info(
                "instance cleanup by {}: removed {} ({} tensors)",
                request.getRemoteAddr(),
                result.removedInstances(),
                result.removedTensors());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("removed_instances", result.removedInstances());
        body.put("removed_tensors", result.removedTensors());
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(body);
    }

    @PostMapping(path = "/cache/memory/cleanup")
    ResponseEntity<?> cleanupMemory(HttpServletRequest request) {
        ResponseEntity<?> denied = authorize(request);
        if (denied != null) {
            return denied;
        }
        MemoryCleanupResult r = engine.cleanupMemory();
        LOG.info(
                "memory cleanup by {}: broke {} transfer locks, evicted {} blocks ({} bytes), reclaimed {} bytes, {}"
                        + " blocks still referenced",
                request.getRemoteAddr(),
                r.brokenTransferLocks(),
                r.evictedBlocks(),
                r.evictedBytes(),
                r.reclaimedBytes(),
                r.stillReferencedBlocks());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("evicted_blocks", r.evictedBlocks());
        body.put("evicted_bytes", r.evictedBytes());
        body.put("reclaimed_bytes", r.reclaimedBytes());
        body.put("still_referenced_blocks", r.stillReferencedBlocks());
        body.put("broken_transfer_locks", r.brokenTransferLocks());
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(body);
    }

    /**
     * A parameter from the query string alone. {@code getParameter} would read a form body too, which is what let slow
     * bodies hold workers (decision 0011, defect 7); the endpoints take no body. Null when the parameter is absent.
     */
    static @Nullable String queryParameter(HttpServletRequest request, String name) {
        String query = request.getQueryString();
        if (query == null) {
            return null;
        }
        String value = UriComponentsBuilder.newInstance()
                .query(query)
                .build()
                .getQueryParams()
                .getFirst(name);
        return value == null ? null : URLDecoder.decode(value, StandardCharsets.UTF_8);
    }

    /** The refusal, or null when the caller may go on. */
    private @Nullable ResponseEntity<?> authorize(HttpServletRequest request) {
        if (access.permits(request)) {
            return null;
        }
        return ResponseEntity.status(HttpStatus.FORBIDDEN)
                .contentType(MediaType.TEXT_PLAIN)
                .body(DENIED);
    }
}
