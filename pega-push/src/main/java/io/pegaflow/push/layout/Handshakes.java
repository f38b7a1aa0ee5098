package io.pegaflow.push.layout;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.proto.ext.push.LayerTarget;
import io.pegaflow.proto.ext.push.PushHandshake;
import io.pegaflow.proto.ext.push.RankTarget;
import java.util.List;

/**
 * Builds and checks the {@link PushHandshake} blob (pd_push.proto). The blob crosses two untrusted hops (decode
 * scheduler, prefill scheduler), so every field is checked before it is used, and a prefill rank whose layout differs
 * from the decode rank's is refused before anything moves.
 */
public final class Handshakes {
    /** 2 adds the receive secret (decision 0022); a version 1 blob is refused as too old to be trusted. */
    public static final int VERSION = 2;
    /** A 16k-token request of a 36-layer model is about 2 KiB; 1 MiB leaves room for hundreds of ranks of layers. */
    public static final int MAX_BYTES = 1 << 20;

    private Handshakes() {}

    /** The blob for one receive, sealed by {@code seal}: every rank's staging base and the common per-layer layout. */
    public static PushHandshake build(
            HandshakeSeal seal,
            String decodeAddress,
            byte[] transferDescriptor,
            ReceiveKey receive,
            int tpSize,
            int blocks,
            List<RankLayers> ranks,
            long[] stagingBase,
            List<StagingLayout> layouts) {
        PushHandshake.Builder b = PushHandshake.newBuilder()
                .setVersion(VERSION)
                .setDecodeAddress(decodeAddress)
                .setTransferDescriptor(ByteString.copyFrom(transferDescriptor))
                .setReceiveId(receive.id())
                .setReceiveSecret(ByteString.copyFrom(receive.secret()))
                .setTpSize(tpSize)
                .setNumBlocks(blocks);
        for (int r = 0; r < ranks.size(); r++) {
            RankLayers rank = ranks.get(r);
            StagingLayout layout = layouts.get(r);
            RankTarget.Builder t = RankTarget.newBuilder().setTpRank(rank.tpRank());
            for (int l = 0; l < layout.layers(); l++) {
                t.addLayers(LayerTarget.newBuilder()
                        .setName(rank.layers().get(l).name())
                        .setBaseAddress(stagingBase[r] + layout.layerOffset(l))
                        .setSegmentBytes(layout.segmentBytes(l))
                        .setSegments(layout.segments(l)));
            }
            b.addRanks(t);
        }
        return seal.seal(b.build());
    }

    /**
     * Parses a blob and checks it against the prefill rank that will push from it.
     *
     * @return the target of {@code rank}
     * @throws EngineException INVALID_ARGUMENT for a malformed or (with a cluster credential) unsealed blob,
     *     FAILED_PRECONDITION for unequal TP sizes or a
     *     layout that differs between prefill and decode
     */
    public static Parsed parse(HandshakeSeal seal, byte[] bytes, RankLayers rank, int blocks) {
        if (bytes.length == 0 || bytes.length > MAX_BYTES) {
            throw EngineException.invalidArgument(
                    "handshake: expected 1 to " + MAX_BYTES + " bytes, got " + bytes.length);
        }
        PushHandshake h;
        try {
            h = PushHandshake.parseFrom(bytes);
        } catch (InvalidProtocolBufferException e) {
            throw EngineException.invalidArgument("handshake: not a PushHandshake (" + e.getMessage() + ")");
        }
        if (h.getVersion() != VERSION) {
            throw EngineException.invalidArgument(
                    "handshake: version " + h.getVersion() + ", this server speaks " + VERSION);
        }
        seal.check(h); // before any address or descriptor in it is read
        if (h.getReceiveId() == 0
                || h.getDecodeAddress().isBlank()
                || h.getTransferDescriptor().isEmpty()) {
            throw EngineException.invalidArgument(
                    "handshake: receive_id, decode_address and transfer_descriptor are" + " required");
        }
        if (h.getReceiveSecret().size() != ReceiveKey.SECRET_BYTES) {
            throw EngineException.invalidArgument("handshake: receive_secret must be " + ReceiveKey.SECRET_BYTES
                    + " bytes, got " + h.getReceiveSecret().size());
        }
        if (h.getTpSize() != rank.tpSize()) {
            throw EngineException.failedPrecondition("unequal TP sizes: prefill tp_size=" + rank.tpSize()
                    + ", decode tp_size=" + h.getTpSize() + "; the push maps prefill rank i to decode rank i and"
                    + " needs equal TP sizes on both sides");
        }
        if (h.getRanksCount() != h.getTpSize()) {
            throw EngineException.invalidArgument(
                    "handshake: " + h.getRanksCount() + " rank targets for tp_size " + h.getTpSize());
        }
        if (h.getNumBlocks() != blocks) {
            throw EngineException.failedPrecondition(
                    "block count differs: prefill pushes " + blocks + " blocks, decode prepared " + h.getNumBlocks());
        }
        RankTarget target = null;
        for (RankTarget t : h.getRanksList()) {
            if (t.getTpRank() == rank.tpRank()) {
                target = t;
            }
        }
        if (target == null) {
            throw EngineException.invalidArgument("handshake: no target for tp_rank " + rank.tpRank());
        }
        if (target.getLayersCount() != rank.layerCount()) {
            throw EngineException.failedPrecondition("layer count differs: prefill rank " + rank.tpRank() + " has "
                    + rank.layerCount() + " layers, decode " + target.getLayersCount());
        }
        for (int l = 0; l < rank.layerCount(); l++) {
            LayerTarget t = target.getLayers(l);
            if (t.getSegments() != rank.segments(l) || t.getSegmentBytes() != rank.segmentBytes(l)) {
                throw EngineException.failedPrecondition(
                        "layout of layer " + l + " (" + rank.layers().get(l).name()
                                + ") differs: prefill " + rank.segments(l) + " x " + rank.segmentBytes(l) + " bytes per"
                                + " block, decode " + t.getSegments() + " x " + t.getSegmentBytes());
            }
        }
        return new Parsed(
                h, target, new ReceiveKey(h.getReceiveId(), h.getReceiveSecret().toByteArray()));
    }

    /** A checked handshake, this rank's target in it, and the key its receive is named by between servers. */
    public record Parsed(PushHandshake handshake, RankTarget target, ReceiveKey receive) {}
}
