/**
 * The edge that {@code pega-server} and {@code pega-metaserver} share, so that a reader meets one pattern twice rather
 * than two patterns (docs/decisions/0007):
 *
 * <ul>
 *   <li>{@link io.pegaflow.edge.rpc}: the interceptor order, the RPC metrics interceptor, the fallback status mapping
 *       and the rate-limited log of INTERNAL errors; each app adds one {@code GrpcExceptionHandler} for its own
 *       exception types;
 *   <li>{@link io.pegaflow.edge.metrics}: the contract of an app's metric catalog, the registrar that builds meters
 *       only from catalog entries, and the read-only view an admin API serves;
 *   <li>{@link io.pegaflow.edge.access}: the one admin-access rule (loopback socket peer, or the bearer token), and
 *       the guard that keeps web pages from driving the HTTP port (Host allow-list, no cross-site mutation);
 *   <li>{@link io.pegaflow.edge.log}: log lines no client can forge (every log argument escaped and bounded);
 *   <li>{@link io.pegaflow.edge.lifecycle}: the one place that ends the process.
 * </ul>
 *
 * <p>What may live here: code that both apps' edges need and that knows neither the engine ({@code pega-core}) nor the
 * metaserver's domain. Anything specific to one app stays in that app. {@link io.pegaflow.edge.EdgeConfiguration} is
 * imported by both applications.
 */
@NullMarked
package io.pegaflow.edge;

import org.jspecify.annotations.NullMarked;
