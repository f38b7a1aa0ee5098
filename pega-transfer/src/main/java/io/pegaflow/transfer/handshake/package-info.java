/** The versioned, validated handshake bytes: {@link io.pegaflow.transfer.handshake.HandshakeDescriptor}. */
package io.pegaflow.transfer.handshake;
