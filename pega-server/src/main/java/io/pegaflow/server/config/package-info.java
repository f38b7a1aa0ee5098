/**
 * The server's configuration tree ({@code pega.*} properties records, the size converter, the SSD condition) and the
 * one place the engine is assembled from it ({@code EngineConfiguration}), with the admin rule and the agents' health.
 * Null-marked: types are non-null unless written {@code @Nullable} (docs/java-quality.md, NullAway).
 */
@NullMarked
package io.pegaflow.server.config;

import org.jspecify.annotations.NullMarked;
