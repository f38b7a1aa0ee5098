/**
 * One-sided transfers between nodes' registered memory (docs/transfer.md).
 *
 * <p>Public API: {@link io.pegaflow.transfer.TransferEngine} (connect, submit, disconnect, view, close) with
 * {@link io.pegaflow.transfer.TransferBatch} in and {@link io.pegaflow.transfer.TransferResult} out,
 * {@link io.pegaflow.transfer.PeerId}, {@link io.pegaflow.transfer.TransferConfig} and
 * {@link io.pegaflow.transfer.NicList} (settings), {@link io.pegaflow.transfer.TransferException} (one error type with
 * a kind), {@link io.pegaflow.transfer.TransferView} and {@link io.pegaflow.transfer.PeerView} (read-only views for
 * metrics and the dashboard), {@link io.pegaflow.transfer.RegisteredRegion}. Engines are built by
 * {@code ucx.UcxTransferEngine} and {@code loopback.LoopbackTransferEngine}; the handshake bytes are
 * {@code handshake.HandshakeDescriptor}.
 */
@NullMarked
package io.pegaflow.transfer;

import org.jspecify.annotations.NullMarked;
