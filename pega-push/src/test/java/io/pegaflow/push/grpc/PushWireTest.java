package io.pegaflow.push.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.proto.ext.push.LayerTarget;
import io.pegaflow.proto.ext.push.PushHandshake;
import io.pegaflow.proto.ext.push.PushLayer;
import io.pegaflow.proto.ext.push.RankTarget;
import io.pegaflow.push.layout.Handshake;
import io.pegaflow.push.layout.HandshakeCodec;
import io.pegaflow.push.layout.HandshakeSeal;
import io.pegaflow.push.layout.PushLayerSpec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * The push's messages and its domain values, both ways: every field survives, unsigned values past the signed range
 * included; a blob that does not parse is refused with the text StartPush has always returned; and a seal covers
 * exactly the bytes it covered when the domain passed the generated messages around, so servers on either side of
 * this change accept each other's handshakes.
 */
class PushWireTest {
    private static final String TOKEN = "a-cluster-credential-of-32-chars";
    private final PushWire wire = new PushWire();

    /** Every field set, none to its default; ids and addresses past Long.MAX_VALUE (uint64 on the wire). */
    private static PushHandshake wireHandshake() {
        return PushHandshake.newBuilder()
                .setVersion(2)
                .setDecodeAddress("decode-7.example:50055")
                .setTransferDescriptor(ByteString.copyFrom(new byte[] {1, 2, 3, (byte) 0xff}))
                .setReceiveId(0xfedc_ba98_7654_3210L)
                .setTpSize(2)
                .setNumBlocks(Integer.MAX_VALUE)
                .addRanks(RankTarget.newBuilder()
                        .setTpRank(0)
                        .addLayers(layer("model.layers.0.attn", 0x7f00_0000_1000L, 4096, 2))
                        .addLayers(layer("model.layers.1.attn", 0xffff_ffff_ffff_f000L, 65536, 1)))
                .addRanks(RankTarget.newBuilder()
                        .setTpRank(1)
                        .addLayers(layer("model.layers.0.attn", 0x10_0000L, 4096, 2))
                        .addLayers(layer("model.layers.1.attn", 0x20_0000L, 65536, 1)))
                .setReceiveSecret(ByteString.copyFrom(new byte[] {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6}))
                .setSeal(ByteString.copyFrom(new byte[32]))
                .build();
    }

    private static LayerTarget layer(String name, long base, long segmentBytes, int segments) {
        return LayerTarget.newBuilder()
                .setName(name)
                .setBaseAddress(base)
                .setSegmentBytes(segmentBytes)
                .setSegments(segments)
                .build();
    }

    @Test
    void shouldCarryEveryFieldOfAHandshakeIntoTheDomain() {
        PushHandshake w = wireHandshake();

        Handshake h = PushWire.fromWire(w);

        assertThat(h.version()).isEqualTo(2);
        assertThat(h.decodeAddress()).isEqualTo("decode-7.example:50055");
        assertThat(h.transferDescriptor()).containsExactly(1, 2, 3, 0xff);
        assertThat(h.receiveId()).isEqualTo(0xfedc_ba98_7654_3210L);
        assertThat(h.tpSize()).isEqualTo(2);
        assertThat(h.numBlocks()).isEqualTo(Integer.MAX_VALUE);
        assertThat(h.receiveSecret()).isEqualTo(w.getReceiveSecret().toByteArray());
        assertThat(h.seal()).hasSize(32).containsOnly(0);
        assertThat(h.ranks()).extracting(Handshake.RankTarget::tpRank).containsExactly(0, 1);
        assertThat(h.ranks().get(0).layers())
                .containsExactly(
                        new Handshake.LayerTarget("model.layers.0.attn", 0x7f00_0000_1000L, 4096, 2),
                        new Handshake.LayerTarget("model.layers.1.attn", 0xffff_ffff_ffff_f000L, 65536, 1));
        assertThat(h.ranks().get(1).layers())
                .containsExactly(
                        new Handshake.LayerTarget("model.layers.0.attn", 0x10_0000L, 4096, 2),
                        new Handshake.LayerTarget("model.layers.1.attn", 0x20_0000L, 65536, 1));
    }

    @Test
    void shouldGiveBackTheSameMessageByteForByte() {
        PushHandshake w = wireHandshake();

        assertThat(PushWire.toWire(PushWire.fromWire(w))).isEqualTo(w);
        assertThat(wire.encode(PushWire.fromWire(w))).isEqualTo(w.toByteArray());
    }

    @Test
    void shouldDecodeWhatItEncodesWithTheSealedBytesOfTheUnsealedMessage() {
        PushHandshake w = wireHandshake();

        HandshakeCodec.Decoded d = wire.decode(w.toByteArray());

        assertThat(PushWire.toWire(d.handshake())).isEqualTo(w);
        assertThat(d.sealedBytes())
                .isEqualTo(w.toBuilder().clearSeal().build().toByteArray())
                .isEqualTo(wire.encode(d.handshake().withSeal(new byte[0])));
    }

    @Test
    void shouldRefuseBytesThatAreNotAHandshakeWithStartPushsText() {
        byte[] garbage = {(byte) 0xff, (byte) 0xff, (byte) 0xff};
        Throwable parser = catchThrowable(() -> assertThat(PushHandshake.parseFrom(garbage))
                .as("garbage parsed")
                .isNull());
        assertThat(parser).isInstanceOf(InvalidProtocolBufferException.class);
        String parserSays = parser.getMessage();

        assertThatThrownBy(() -> wire.decode(garbage)).isInstanceOfSatisfying(EngineException.class, e -> {
            assertThat(e.kind()).isEqualTo(EngineException.Kind.INVALID_ARGUMENT);
            assertThat(e.getMessage())
                    .isEqualTo("invalid argument: handshake: not a PushHandshake (" + parserSays + ")");
        });
    }

    @Test
    void shouldSealOverTheSameBytesAsTheGeneratedMessageWithItsSealCleared() throws Exception {
        PushHandshake unsealed = wireHandshake().toBuilder().clearSeal().build();
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(TOKEN.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        byte[] expected = mac.doFinal(unsealed.toByteArray());

        Handshake sealed = HandshakeSeal.of(TOKEN).seal(PushWire.fromWire(unsealed), wire);

        assertThat(sealed.seal()).isEqualTo(expected);
        HandshakeSeal.of(TOKEN).check(wire.decode(wire.encode(sealed)));
    }

    @Test
    void shouldKeepFieldsItDoesNotKnowUnderTheSeal() {
        HandshakeSeal seal = HandshakeSeal.of(TOKEN);
        PushHandshake sealed = PushWire.toWire(seal.seal(
                PushWire.fromWire(wireHandshake().toBuilder().clearSeal().build()), wire));
        PushHandshake extended = sealed.toBuilder()
                .setUnknownFields(UnknownFieldSet.newBuilder()
                        .addField(
                                99,
                                UnknownFieldSet.Field.newBuilder().addVarint(1).build())
                        .build())
                .build();

        seal.check(wire.decode(sealed.toByteArray()));
        assertThatThrownBy(() -> seal.check(wire.decode(extended.toByteArray())))
                .isInstanceOfSatisfying(EngineException.class, e -> {
                    assertThat(e.kind()).isEqualTo(EngineException.Kind.INVALID_ARGUMENT);
                    assertThat(e.getMessage())
                            .startsWith("invalid argument: handshake: not sealed by a decode server of this cluster");
                });
    }

    @Test
    void shouldCarryEveryFieldOfARegisteredLayerInOrder() {
        PushLayer first = PushLayer.newBuilder()
                .setName("model.layers.0.attn")
                .setWrapperBytes(ByteString.copyFrom(new byte[] {4, 5, 6}))
                .setNumBlocks(0xffff_ffff_ffff_fff0L)
                .setBytesPerBlock(8192)
                .setKvStrideBytes(1L << 33)
                .setSegments(-1) // uint32 4294967295 on the wire, read as the int -1 as before
                .build();
        PushLayer empty = PushLayer.getDefaultInstance();

        List<PushLayerSpec> specs = PushWire.layers(List.of(first, empty));

        assertThat(specs).hasSize(2);
        PushLayerSpec s = specs.get(0);
        assertThat(s.name()).isEqualTo("model.layers.0.attn");
        assertThat(s.wrapperBytes()).containsExactly(4, 5, 6);
        assertThat(s.numBlocks()).isEqualTo(0xffff_ffff_ffff_fff0L);
        assertThat(s.bytesPerBlock()).isEqualTo(8192);
        assertThat(s.kvStrideBytes()).isEqualTo(1L << 33);
        assertThat(s.segments()).isEqualTo(-1);
        PushLayerSpec e = specs.get(1);
        assertThat(e.name()).isEmpty();
        assertThat(e.wrapperBytes()).isEmpty();
        assertThat(e.numBlocks()).isZero();
        assertThat(e.bytesPerBlock()).isZero();
        assertThat(e.kvStrideBytes()).isZero();
        assertThat(e.segments()).isZero();
    }
}
