package io.pegaflow.push.layout;

import io.pegaflow.core.error.EngineException;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds and checks the {@link Handshake} blob ({@code PushHandshake} of pd_push.proto, encoded by a
 * {@link HandshakeCodec}). The blob crosses two untrusted hops (decode scheduler, prefill scheduler), so every field is
 * checked before it is used, and a prefill rank whose layout differs from the decode rank's is refused before anything
 * moves.
 */
public final class Handshakes {
    /** 2 adds the receive secret (decision 0022); a version 1 blob is refused as too old to be trusted. */
    public static final int VERSION = 2;
    /** A 16k-token request of a 36-layer model is about 2 KiB; 1 MiB leaves room for hundreds of ranks of layers. */
    public static final int MAX_BYTES = 1 << 20;

    private Handshakes() {}

    /** The blob for one receive, sealed by {@code seal}: every rank's staging base and the common per-layer layout. */
    public static byte[] build(
            HandshakeSeal seal,
            HandshakeCodec codec,
            String decodeAddress,
            byte[] transferDescriptor,
            ReceiveKey receive,
            int tpSize,
            int blocks,
            List<RankLayers> ranks,
            long[] stagingBase,
            List<StagingLayout> layouts) {
        List<Handshake.RankTarget> targets = new ArrayList<>(ranks.size());
        for (int r = 0; r < ranks.size(); r++) {
            RankLayers rank = ranks.get(r);
            StagingLayout layout = layouts.get(r);
            List<Handshake.LayerTarget> layers = new ArrayList<>(layout.layers());
            for (int l = 0; l < layout.layers(); l++) {
                layers.add(new Handshake.LayerTarget(
                        rank.layers().get(l).name(),
                        stagingBase[r] + layout.layerOffset(l),
                        layout.segmentBytes(l),
                        layout.segments(l)));
            }
            targets.add(new Handshake.RankTarget(rank.tpRank(), layers));
        }
        Handshake unsealed = new Handshake(
                VERSION,
                decodeAddress,
                transferDescriptor,
                receive.id(),
                tpSize,
                blocks,
                targets,
                receive.secret(),
                new byte[0]);
        return codec.encode(seal.seal(unsealed, codec));
    }

    /**
     * Parses a blob and checks it against the prefill rank that will push from it.
     *
     * @return the target of {@code rank}
     * @throws EngineException INVALID_ARGUMENT for a malformed or (with a cluster credential) unsealed blob,
     *     FAILED_PRECONDITION for unequal TP sizes or a
     *     layout that differs between prefill and decode
     */
    public static Parsed parse(HandshakeSeal seal, HandshakeCodec codec, byte[] bytes, RankLayers rank, int blocks) {
        if (bytes.length == 0 || bytes.length > MAX_BYTES) {
            throw EngineException.invalidArgument(
                    "handshake: expected 1 to " + MAX_BYTES + " bytes, got " + bytes.length);
        }
        HandshakeCodec.Decoded blob = codec.decode(bytes);
        Handshake h = blob.handshake();
        if (h.version() != VERSION) {
            throw EngineException.invalidArgument(
                    "handshake: version " + h.version() + ", this server speaks " + VERSION);
        }
        seal.check(blob); // before any address or descriptor in it is read
        if (h.receiveId() == 0 || h.decodeAddress().isBlank() || h.transferDescriptor().length == 0) {
            throw EngineException.invalidArgument(
                    "handshake: receive_id, decode_address and transfer_descriptor are" + " required");
        }
        if (h.receiveSecret().length != ReceiveKey.SECRET_BYTES) {
            throw EngineException.invalidArgument("handshake: receive_secret must be " + ReceiveKey.SECRET_BYTES
                    + " bytes, got " + h.receiveSecret().length);
        }
        if (h.tpSize() != rank.tpSize()) {
            throw EngineException.failedPrecondition("unequal TP sizes: prefill tp_size=" + rank.tpSize()
                    + ", decode tp_size=" + h.tpSize() + "; the push maps prefill rank i to decode rank i and"
                    + " needs equal TP sizes on both sides");
        }
        if (h.ranks().size() != h.tpSize()) {
            throw EngineException.invalidArgument(
                    "handshake: " + h.ranks().size() + " rank targets for tp_size " + h.tpSize());
        }
        if (h.numBlocks() != blocks) {
            throw EngineException.failedPrecondition(
                    "block count differs: prefill pushes " + blocks + " blocks, decode prepared " + h.numBlocks());
        }
        Handshake.RankTarget target = null;
        for (Handshake.RankTarget t : h.ranks()) {
            if (t.tpRank() == rank.tpRank()) {
                target = t;
            }
        }
        if (target == null) {
            throw EngineException.invalidArgument("handshake: no target for tp_rank " + rank.tpRank());
        }
        if (target.layers().size() != rank.layerCount()) {
            throw EngineException.failedPrecondition("layer count differs: prefill rank " + rank.tpRank() + " has "
                    + rank.layerCount() + " layers, decode " + target.layers().size());
        }
        for (int l = 0; l < rank.layerCount(); l++) {
            Handshake.LayerTarget t = target.layers().get(l);
            if (t.segments() != rank.segments(l) || t.segmentBytes() != rank.segmentBytes(l)) {
                throw EngineException.failedPrecondition(
                        "layout of layer " + l + " (" + rank.layers().get(l).name()
                                + ") differs: prefill " + rank.segments(l) + " x " + rank.segmentBytes(l) + " bytes per"
                                + " block, decode " + t.segments() + " x " + t.segmentBytes());
            }
        }
        return new Parsed(h, target, new ReceiveKey(h.receiveId(), h.receiveSecret()));
    }

    /** A checked handshake, this rank's target in it, and the key its receive is named by between servers. */
    public record Parsed(Handshake handshake, Handshake.RankTarget target, ReceiveKey receive) {}
}
