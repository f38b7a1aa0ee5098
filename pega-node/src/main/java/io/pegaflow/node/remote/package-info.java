/**
 * The {@code remote} tier: RAM and SSD misses fetched from the peer that owns the longest prefix of them, over the
 * node's P2P transfer engine. It reaches peers only through two ports, {@link io.pegaflow.node.remote.PeerBlocks}
 * (handshake, lock and describe, release) and {@link io.pegaflow.node.remote.RemoteFetchTier.OwnerDirectory} (who
 * owns which prefix); the application implements them over its wire (pega-server: gRPC), so no wire type reaches the
 * tier. The node builds the tier from a {@link io.pegaflow.node.remote.RemoteConfig} and is its one owner.
 */
@NullMarked
package io.pegaflow.node.remote;

import org.jspecify.annotations.NullMarked;
