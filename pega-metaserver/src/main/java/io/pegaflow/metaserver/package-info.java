/**
 * The PegaFlow metaserver: a cluster-wide index of which node holds which KV block, plus node lifecycle fencing.
 *
 * <p>Packages: {@code .grpc} (the wire-compatible {@code pegaflow.MetaServer} service), {@code .index} (the
 * in-memory block-owner index and the sweep), {@code .node} (node sessions, fencing, persistence through JDBC),
 * {@code .config} (properties and wiring), {@code .web} (HTTP health, metrics and the node list).
 */
@NullMarked
package io.pegaflow.metaserver;

import org.jspecify.annotations.NullMarked;
