package io.pegaflow.server.config;

import io.pegaflow.core.engine.EngineContext;

/**
 * A feature's settings of the engine context that are neither a tier, a spill nor an index listener (the transfer
 * lock timeout of {@code pega.rdma.*}): applied, in {@code @Order}, before the context is concluded. A customizer must
 * only set values; it may throw {@link IllegalArgumentException} naming the key it refuses.
 */
@FunctionalInterface
public interface EngineCustomizer {
    void customize(EngineContext context);
}
