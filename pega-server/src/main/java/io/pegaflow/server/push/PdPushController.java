package io.pegaflow.server.push;

import io.pegaflow.edge.access.AdminAccess;
import io.pegaflow.push.PushEngine;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /pd}: the push engine's read-only {@link io.pegaflow.push.view.PushView} (counters and every push and receive
 * in flight) for operators and the dashboard. It names requests and instances, so it asks {@link AdminAccess} like
 * the other admin endpoints. Only when {@code pega.pd.enabled=true}.
 */
@RestController
@ConditionalOnProperty(name = "pega.pd.enabled", havingValue = "true")
class PdPushController {
    private final PushEngine push;
    private final AdminAccess access;

    PdPushController(PushEngine push, AdminAccess access) {
        this.push = push;
        this.access = access;
    }

    @GetMapping(path = "/pd", produces = MediaType.APPLICATION_JSON_VALUE)
    ResponseEntity<?> view(HttpServletRequest request) {
        if (!access.permits(request)) {
            return ResponseEntity.status(HttpStatus.FORBIDDEN)
                    .contentType(MediaType.TEXT_PLAIN)
                    .body("forbidden: admin access required");
        }
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(push.view());
    }
}
