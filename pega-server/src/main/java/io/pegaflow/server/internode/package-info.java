/**
 * The server side of the cluster index: {@link io.pegaflow.server.internode.MetaserverClient} announces sealed and
 * evicted blocks to the metaserver, keeps the node's session alive and re-announces resident blocks when the
 * metaserver's epoch changes. Enabled by {@code pega.metaserver.addr}; see docs/metaserver.md.
 */
@NullMarked
package io.pegaflow.server.internode;

import org.jspecify.annotations.NullMarked;
