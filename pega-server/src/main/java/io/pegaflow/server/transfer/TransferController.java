package io.pegaflow.server.transfer;

import io.pegaflow.edge.access.AdminAccess;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /transfer}: the read-only {@link TransferStatus} for operators and the dashboard. It names peers and their
 * addresses, so it asks {@link AdminAccess} like the other admin endpoints. Only when {@code pega.rdma.enabled=true}.
 */
@RestController
@ConditionalOnProperty(name = "pega.rdma.enabled", havingValue = "true")
class TransferController {
    private final TransferStatusView view;
    private final AdminAccess access;

    TransferController(TransferStatusView view, AdminAccess access) {
        this.view = view;
        this.access = access;
    }

    @GetMapping(path = "/transfer", produces = MediaType.APPLICATION_JSON_VALUE)
    ResponseEntity<?> view(HttpServletRequest request) {
        if (!access.permits(request)) {
            return ResponseEntity.status(HttpStatus.FORBIDDEN)
                    .contentType(MediaType.TEXT_PLAIN)
                    .body("forbidden: admin access required");
        }
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(view.snapshot());
    }
}
