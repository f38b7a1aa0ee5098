/**
 * The PegaFlow sidecar's Spring Boot application ({@link io.pegaflow.server.PegaServerApplication}); its subpackages
 * hold the configuration, the gRPC and HTTP surfaces and the tiers' wiring. Null-marked: types are non-null unless
 * written {@code @Nullable} (docs/java-quality.md, NullAway).
 */
@NullMarked
package io.pegaflow.server;

import org.jspecify.annotations.NullMarked;
