/** The versioned, validated handshake bytes: {@link io.pegaflow.transfer.handshake.HandshakeDescriptor}. */
@NullMarked
package io.pegaflow.transfer.handshake;

import org.jspecify.annotations.NullMarked;
