/**
 * Cross-node KV sharing (issue 14, docs/transfer.md): {@code pega.rdma.*}, the UCX transfer engine over the pool, and
 * the remote tier that fetches RAM and SSD misses from the peer owning the longest prefix. The owner's RPCs are in
 * {@code server.grpc} ({@code TransferRpcs}).
 */
@NullMarked
package io.pegaflow.server.transfer;

import org.jspecify.annotations.NullMarked;
