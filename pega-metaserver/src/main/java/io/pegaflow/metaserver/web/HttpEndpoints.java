package io.pegaflow.metaserver.web;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The reference's HTTP surface: {@code GET /health} answers {@code ok} and {@code GET /metrics} serves Prometheus
 * text, so existing probes and scrape configs work unchanged. {@code /actuator/health} and
 * {@code /actuator/prometheus} serve the same through actuator.
 */
@RestController
class HttpEndpoints {

    private static final MediaType PROMETHEUS_TEXT = MediaType.parseMediaType("text/plain;version=0.0.4;charset=utf-8");

    private final ObjectProvider<PrometheusMeterRegistry> prometheus;

    HttpEndpoints(ObjectProvider<PrometheusMeterRegistry> prometheus) {
        this.prometheus = prometheus;
    }

    @GetMapping(value = "/health", produces = MediaType.TEXT_PLAIN_VALUE)
    String health() {
        return "ok";
    }

    @GetMapping("/metrics")
    ResponseEntity<String> metrics() {
        PrometheusMeterRegistry registry = prometheus.getIfAvailable();
        if (registry == null) {
            return ResponseEntity.status(HttpStatus.NOT_FOUND).body("prometheus export is disabled\n");
        }
        return ResponseEntity.ok().contentType(PROMETHEUS_TEXT).body(registry.scrape());
    }
}
