package io.pegaflow.push.layout;

import io.pegaflow.core.error.EngineException;

/**
 * How a {@link Handshake} becomes the opaque blob that PrepareReceive hands out and StartPush takes back. The encoding
 * is the wire's, so it lives with the gRPC adapter; the push engine is given one.
 */
public interface HandshakeCodec {
    /** The blob of {@code handshake}. Equal handshakes give equal bytes: a seal is computed over them. */
    byte[] encode(Handshake handshake);

    /**
     * A blob's handshake, with the bytes its seal covers.
     *
     * @throws EngineException INVALID_ARGUMENT for bytes that are not a handshake
     */
    Decoded decode(byte[] blob);

    /**
     * A decoded blob.
     *
     * @param sealedBytes what the seal was computed over: the blob as decoded, fields this server does not know
     *     included, encoded again with an empty seal
     */
    record Decoded(Handshake handshake, byte[] sealedBytes) {}
}
