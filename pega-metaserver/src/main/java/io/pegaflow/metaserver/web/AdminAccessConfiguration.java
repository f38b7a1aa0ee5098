package io.pegaflow.metaserver.web;

import io.pegaflow.edge.access.AdminAccess;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The metaserver's operator mutations go through the one admin rule, as the server's do (decision 0016 §4). It has no
 * mutating endpoint of its own; what it can expose is actuator's ({@code loggers}, {@code shutdown}, … when an operator
 * adds them to {@code management.endpoints.web.exposure.include}). Without an {@link AdminAccess} bean the edge's
 * admission valve had nothing to judge them by and let every caller through; with it, a POST needs
 * {@code Authorization: Bearer <pega.admin.token>} unless the HTTP listener is loopback-only, and is refused before its
 * body is read.
 *
 * <p>The node protocol (HeartbeatNode, InsertBlockHashes, RemoveBlockHashes, UnregisterNode) is not an operator
 * mutation: every server calls it, the reference's servers without any token, and each write is bound to the caller's
 * node_id, which no endpoint discloses (decision 0016 §4).
 */
@Configuration(proxyBeanMethods = false)
class AdminAccessConfiguration {

    @Bean
    AdminAccess adminAccess(@Value("${pega.admin.token:}") String token) {
        return new AdminAccess(token);
    }
}
