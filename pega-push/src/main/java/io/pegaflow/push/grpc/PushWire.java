package io.pegaflow.push.grpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.proto.ext.push.LayerTarget;
import io.pegaflow.proto.ext.push.PushHandshake;
import io.pegaflow.proto.ext.push.PushLayer;
import io.pegaflow.proto.ext.push.RankTarget;
import io.pegaflow.push.layout.Handshake;
import io.pegaflow.push.layout.HandshakeCodec;
import io.pegaflow.push.layout.PushLayerSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * The handshake and the registered layers between their messages of {@code pegaflow.ext.PdPush} (pd_push.proto) and
 * the push's domain records; the requests' scalar fields are read where each RPC is served. As the push engine's
 * {@link HandshakeCodec}, a handshake's blob is its {@link PushHandshake} serialized, so a seal covers the same bytes
 * it covered when the domain passed the generated messages around. Stateless and thread-safe.
 */
public final class PushWire implements HandshakeCodec {
    @Override
    public byte[] encode(Handshake handshake) {
        return toWire(handshake).toByteArray();
    }

    /**
     * {@inheritDoc}
     *
     * <p>The sealed bytes are the parsed message serialized with its seal cleared; fields that this version does not
     * know stay in them, so a seal over a handshake that someone extended on its way does not match.
     */
    @Override
    public Decoded decode(byte[] blob) {
        PushHandshake h;
        try {
            h = PushHandshake.parseFrom(blob);
        } catch (InvalidProtocolBufferException e) {
            throw EngineException.invalidArgument("handshake: not a PushHandshake (" + e.getMessage() + ")");
        }
        return new Decoded(fromWire(h), h.toBuilder().clearSeal().build().toByteArray());
    }

    public static PushHandshake toWire(Handshake h) {
        PushHandshake.Builder b = PushHandshake.newBuilder()
                .setVersion(h.version())
                .setDecodeAddress(h.decodeAddress())
                .setTransferDescriptor(ByteString.copyFrom(h.transferDescriptor()))
                .setReceiveId(h.receiveId())
                .setTpSize(h.tpSize())
                .setNumBlocks(h.numBlocks())
                .setReceiveSecret(ByteString.copyFrom(h.receiveSecret()))
                .setSeal(ByteString.copyFrom(h.seal()));
        for (Handshake.RankTarget rank : h.ranks()) {
            RankTarget.Builder r = RankTarget.newBuilder().setTpRank(rank.tpRank());
            for (Handshake.LayerTarget l : rank.layers()) {
                r.addLayers(LayerTarget.newBuilder()
                        .setName(l.name())
                        .setBaseAddress(l.baseAddress())
                        .setSegmentBytes(l.segmentBytes())
                        .setSegments(l.segments()));
            }
            b.addRanks(r);
        }
        return b.build();
    }

    public static Handshake fromWire(PushHandshake h) {
        List<Handshake.RankTarget> ranks = new ArrayList<>(h.getRanksCount());
        for (RankTarget r : h.getRanksList()) {
            List<Handshake.LayerTarget> layers = new ArrayList<>(r.getLayersCount());
            for (LayerTarget l : r.getLayersList()) {
                layers.add(new Handshake.LayerTarget(
                        l.getName(), l.getBaseAddress(), l.getSegmentBytes(), l.getSegments()));
            }
            ranks.add(new Handshake.RankTarget(r.getTpRank(), layers));
        }
        return new Handshake(
                h.getVersion(),
                h.getDecodeAddress(),
                h.getTransferDescriptor().toByteArray(),
                h.getReceiveId(),
                h.getTpSize(),
                h.getNumBlocks(),
                ranks,
                h.getReceiveSecret().toByteArray(),
                h.getSeal().toByteArray());
    }

    /** A RegisterPushLayers request's layers, in order. */
    public static List<PushLayerSpec> layers(List<PushLayer> layers) {
        List<PushLayerSpec> out = new ArrayList<>(layers.size());
        for (PushLayer l : layers) {
            out.add(layer(l));
        }
        return out;
    }

    static PushLayerSpec layer(PushLayer l) {
        return new PushLayerSpec(
                l.getName(),
                l.getWrapperBytes().toByteArray(),
                l.getNumBlocks(),
                l.getBytesPerBlock(),
                l.getKvStrideBytes(),
                l.getSegments());
    }
}
