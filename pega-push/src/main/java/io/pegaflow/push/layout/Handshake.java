package io.pegaflow.push.layout;

import java.util.List;

/**
 * The handshake a decode server hands out for one receive and a prefill server pushes from: where the decode server
 * is, how its transfer engine is reached, and every rank's staging in its pool. Byte of (block position p, segment s)
 * of a layer lies at {@code baseAddress + (p * segments + s) * segmentBytes}. Its encoding is the adapter's concern
 * ({@link HandshakeCodec}); {@link Handshakes} builds and checks it.
 *
 * <p>The arrays are not copied: a handshake is built once and read, never changed.
 *
 * @param version {@link Handshakes#VERSION} for a handshake this server built
 * @param decodeAddress {@code host:port} of the decode server's gRPC endpoint, also its transfer peer id
 * @param transferDescriptor the decode server's encoded transfer handshake descriptor
 * @param receiveId names the receive; never 0, and not secret
 * @param ranks one target per TP rank
 * @param receiveSecret the capability that LayerArrived, PushFailed and WatchReceive present
 * @param seal the cluster credential's HMAC over the handshake encoded with an empty seal; empty when unsealed
 */
public record Handshake(
        int version,
        String decodeAddress,
        byte[] transferDescriptor,
        long receiveId,
        int tpSize,
        int numBlocks,
        List<RankTarget> ranks,
        byte[] receiveSecret,
        byte[] seal) {
    public Handshake {
        ranks = List.copyOf(ranks);
    }

    /** This handshake with {@code newSeal} as its seal. */
    public Handshake withSeal(byte[] newSeal) {
        return new Handshake(
                version,
                decodeAddress,
                transferDescriptor,
                receiveId,
                tpSize,
                numBlocks,
                ranks,
                receiveSecret,
                newSeal);
    }

    /** Where one decode rank's layers are staged. */
    public record RankTarget(int tpRank, List<LayerTarget> layers) {
        public RankTarget {
            layers = List.copyOf(layers);
        }
    }

    /** Where one layer of a decode rank is staged, and its per-block layout (which must equal the prefill rank's). */
    public record LayerTarget(String name, long baseAddress, long segmentBytes, int segments) {}
}
