package io.pegaflow.server.transfer;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /transfer}: the read-only {@link TransferStatus} for operators and the dashboard. It names peers and their
 * addresses, so it is served under the one admin read
 * policy ({@code web.AdminReadFilter}). Only when {@code pega.rdma.enabled=true}.
 */
@RestController
@ConditionalOnProperty(name = "pega.rdma.enabled", havingValue = "true")
class TransferController {
    private final TransferStatusView view;

    TransferController(TransferStatusView view) {
        this.view = view;
    }

    @GetMapping(path = "/transfer", produces = MediaType.APPLICATION_JSON_VALUE)
    TransferStatus view() {
        return view.snapshot();
    }
}
