/**
 * Cross-node KV sharing (docs/transfer.md): {@code pega.rdma.*} mapped onto the node's UCX transfer engine and remote
 * tier (both built by the node, the tier in {@code io.pegaflow.node.remote}), their metrics and {@code GET /transfer}.
 * The owner's RPCs are in {@code server.grpc} ({@code TransferRpcs}); the requester's calls to peers and to the
 * metaserver, the tier's gRPC ports, are in {@code server.internode}.
 */
@NullMarked
package io.pegaflow.server.transfer;

import org.jspecify.annotations.NullMarked;
