/**
 * {@code pegaflow.Engine} over gRPC: the service, the owner's side of the P2P RPCs ({@code TransferRpcs}), the
 * engine's error mapping, the caller identity of each connection and the server's part of the shared RPC edge.
 * Null-marked: types are non-null unless written {@code @Nullable} (docs/java-quality.md, NullAway).
 */
@NullMarked
package io.pegaflow.server.grpc;

import org.jspecify.annotations.NullMarked;
