/**
 * The server side of the cluster index: {@link io.pegaflow.server.internode.MetaserverClient} announces sealed and
 * evicted blocks to the metaserver, keeps the node's session alive and re-announces resident blocks when the
 * metaserver's epoch changes. Enabled by {@code pega.metaserver.addr}; see docs/metaserver.md. Also the node's
 * remote tier's ports over gRPC: {@link io.pegaflow.server.internode.GrpcPeerBlocks} (calls to the owning peer) and
 * {@link io.pegaflow.server.internode.MetaserverOwners} (who owns which prefix).
 */
@NullMarked
package io.pegaflow.server.internode;

import org.jspecify.annotations.NullMarked;
