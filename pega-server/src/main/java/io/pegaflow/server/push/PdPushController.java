package io.pegaflow.server.push;

import io.pegaflow.push.PushEngine;
import io.pegaflow.push.view.PushView;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /pd}: the push engine's read-only {@link io.pegaflow.push.view.PushView} (counters and every push and receive
 * in flight) for operators and the dashboard. It names requests and instances, so it is
 * served under the one admin read policy ({@code web.AdminReadFilter}). Only when {@code pega.pd.enabled=true}.
 */
@RestController
@ConditionalOnProperty(name = "pega.pd.enabled", havingValue = "true")
class PdPushController {
    private final PushEngine push;

    PdPushController(PushEngine push) {
        this.push = push;
    }

    @GetMapping(path = "/pd", produces = MediaType.APPLICATION_JSON_VALUE)
    PushView view() {
        return push.view();
    }
}
