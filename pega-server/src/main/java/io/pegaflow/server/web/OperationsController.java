package io.pegaflow.server.web;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.pegaflow.core.engine.CleanupResult;
import io.pegaflow.core.engine.MemoryCleanupResult;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.edge.access.AdminAccess;
import jakarta.servlet.http.HttpServletRequest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The reference's HTTP operations surface (spec/engine-api.md §9) with its paths and JSON shapes. Mutating
 * endpoints ask the one {@link AdminAccess} rule (a loopback socket peer, or {@code Authorization: Bearer
 * <pega.admin.token>}); the reference served them to anyone.
 */
@RestController
class OperationsController {
    static final String DENIED =
            "mutating endpoints need 'Authorization: Bearer <pega.admin.token>' from a remote caller";
    private static final Logger LOG = LoggerFactory.getLogger(OperationsController.class);
    private final PegaEngine engine;
    private final PrometheusMeterRegistry prometheus;
    private final AdminAccess access;

    OperationsController(PegaEngine engine, PrometheusMeterRegistry prometheus, AdminAccess access) {
        this.engine = engine;
        this.prometheus = prometheus;
        this.access = access;
    }

    @GetMapping(path = "/health", produces = MediaType.TEXT_PLAIN_VALUE)
    String health() {
        return "ok";
    }

    @GetMapping(path = "/metrics", produces = "text/plain; version=0.0.4; charset=utf-8")
    String metrics() {
        return prometheus.scrape();
    }

    @GetMapping(path = "/instances", produces = MediaType.APPLICATION_JSON_VALUE)
    Map<String, List<String>> instances() {
        return Map.of("instances", engine.instanceIds());
    }

    @PostMapping(path = "/instances/cleanup")
    ResponseEntity<?> cleanupInstances(
            @RequestParam(name = "id", required = false) String id, HttpServletRequest request) {
        ResponseEntity<?> denied = authorize(request);
        if (denied != null) {
            return denied;
        }
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
                "memory cleanup by {}: evicted {} blocks ({} bytes), reclaimed {} bytes, {} blocks still referenced",
                request.getRemoteAddr(),
                r.evictedBlocks(),
                r.evictedBytes(),
                r.reclaimedBytes(),
                r.stillReferencedBlocks());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("evicted_blocks", r.evictedBlocks());
        body.put("evicted_bytes", r.evictedBytes());
        body.put("reclaimed_bytes", r.reclaimedBytes());
        body.put("still_referenced_blocks", r.stillReferencedBlocks());
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(body);
    }

    private ResponseEntity<?> authorize(HttpServletRequest request) {
        if (access.permits(request)) {
            return null;
        }
        return ResponseEntity.status(HttpStatus.FORBIDDEN)
                .contentType(MediaType.TEXT_PLAIN)
                .body(DENIED);
    }
}
