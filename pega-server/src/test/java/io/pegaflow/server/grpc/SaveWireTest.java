package io.pegaflow.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.pegaflow.core.engine.LayerSave;
import io.pegaflow.proto.SaveLayer;
import io.pegaflow.proto.SaveRequest;
import java.io.ByteArrayOutputStream;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A Save's layers decode to the same values whether or not they share the first layer's arrays. */
@Timeout(10)
class SaveWireTest {
    private static SaveLayer layer(String name, List<Integer> ids, String... hashes) {
        SaveLayer.Builder b = SaveLayer.newBuilder().setLayerName(name).addAllBlockIds(ids);
        for (String h : hashes) {
            b.addBlockHashes(ByteString.copyFromUtf8(h));
        }
        return b.build();
    }

    private static List<LayerSave> decode(SaveLayer... layers) throws Exception {
        byte[] bytes =
                SaveRequest.newBuilder().addAllSaves(List.of(layers)).build().toByteArray();
        return SaveWire.decode(bytes, 0, bytes.length).layers();
    }

    @Test
    void shouldShareTheFirstLayersArraysWithLayersOfTheSamePairs() throws Exception {
        List<LayerSave> out = decode(
                layer("a", List.of(7, 3, 900), "h0", "h1", "h2"),
                layer("b", List.of(7, 3, 900), "h0", "h1", "h2"),
                layer("c", List.of(7, 3, 900), "h0", "h1", "h2"));

        assertThat(out).extracting(LayerSave::layerName).containsExactly("a", "b", "c");
        assertThat(out.get(0).blockIds()).containsExactly(7, 3, 900);
        assertThat(out.get(0).blockHashes()).extracting(String::new).containsExactly("h0", "h1", "h2");
        assertThat(out.get(1).blockIds()).isSameAs(out.get(0).blockIds());
        assertThat(out.get(2).blockHashes()).isSameAs(out.get(0).blockHashes());
    }

    @Test
    void shouldDecodeALayerOfOtherIdsOrHashesOnItsOwn() throws Exception {
        List<LayerSave> out = decode(
                layer("a", List.of(1, 2), "h0", "h1"),
                layer("b", List.of(1, 5), "h0", "h1"),
                layer("c", List.of(1, 2), "h0", "hX"),
                layer("d", List.of(1, 2, 3), "h0", "h1"),
                layer("e", List.of(1, 2), "h0", "h1"));

        assertThat(out.get(1).blockIds())
                .containsExactly(1, 5)
                .isNotSameAs(out.get(0).blockIds());
        assertThat(out.get(2).blockHashes()).extracting(String::new).containsExactly("h0", "hX");
        assertThat(out.get(2).blockHashes()).isNotSameAs(out.get(0).blockHashes());
        assertThat(out.get(3).blockIds()).containsExactly(1, 2, 3);
        assertThat(out.get(3).blockHashes()).extracting(String::new).containsExactly("h0", "h1");
        assertThat(out.get(4).blockIds()).isSameAs(out.get(0).blockIds());
    }

    @Test
    void shouldDecodeNegativeAndLargeIdsWithoutBoxingThemWrong() throws Exception {
        List<LayerSave> out = decode(layer("a", List.of(-1, Integer.MAX_VALUE, 128, 127)));

        assertThat(out.get(0).blockIds()).containsExactly(-1, Integer.MAX_VALUE, 128, 127);
        assertThat(out.get(0).blockHashes()).isEmpty();
    }

    /**
     * A name among the first layer's pairs is part of the bytes a later layer may repeat: such a layer's name is that
     * inner one (the last written), so it is decoded on its own rather than given the first layer's arrays and its
     * leading name.
     */
    @Test
    void shouldKeepTheLastNameWhenTheRepeatedBytesHoldOne() throws Exception {
        ByteArrayOutputStream pairs = new ByteArrayOutputStream();
        CodedOutputStream p = CodedOutputStream.newInstance(pairs);
        p.writeInt32(2, 7);
        p.writeString(1, "inner");
        p.writeBytes(3, ByteString.copyFromUtf8("h7"));
        p.flush();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        out.writeByteArray(4, pairs.toByteArray());
        ByteArrayOutputStream second = new ByteArrayOutputStream();
        CodedOutputStream s = CodedOutputStream.newInstance(second);
        s.writeString(1, "outer");
        s.flush();
        second.write(pairs.toByteArray());
        out.writeByteArray(4, second.toByteArray());
        out.flush();
        byte[] wire = bytes.toByteArray();

        List<LayerSave> layers = SaveWire.decode(wire, 0, wire.length).layers();

        assertThat(SaveRequest.parseFrom(wire).getSaves(1).getLayerName()).isEqualTo("inner");
        assertThat(layers).extracting(LayerSave::layerName).containsExactly("inner", "inner");
        assertThat(layers.get(1).blockIds()).containsExactly(7);
    }

    @Test
    void shouldReadTheScalarsLastValueAndDefaults() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        out.writeString(1, "first");
        out.writeUInt32(5, 9);
        out.writeInt32(3, -2);
        out.writeString(1, "inst");
        out.flush();

        SaveCall call = SaveWire.decode(bytes.toByteArray(), 0, bytes.size());

        assertThat(call.instanceId()).isEqualTo("inst");
        assertThat(call.tpRank()).isZero();
        assertThat(call.deviceId()).isEqualTo(-2);
        assertThat(call.ppRank()).isEqualTo(9);
        assertThat(call.layers()).isEmpty();
        assertThat(call.malformed()).isNull();
    }

    @Test
    void shouldRefuseANameThatIsNotUtf8AsTheGeneratedParserDoes() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        out.writeBytes(1, ByteString.copyFrom(new byte[] {(byte) 0xC3, 0x28}));
        out.flush();
        byte[] wire = bytes.toByteArray();

        assertThatThrownBy(() -> SaveRequest.parseFrom(wire)).isInstanceOf(InvalidProtocolBufferException.class);
        assertThatThrownBy(() -> SaveWire.decode(wire, 0, wire.length))
                .isInstanceOf(InvalidProtocolBufferException.class);
    }

    /** An end-group tag with no group open ends a generated parse early, which then fails; so does the decoder. */
    @Test
    void shouldRefuseAStrayEndGroupTagAtTheTopOrInALayer() throws Exception {
        byte endGroup = (byte) ((9 << 3) | 4);
        byte[] layer = SaveLayer.newBuilder().addBlockIds(3).build().toByteArray();
        byte[] layerWithEnd = java.util.Arrays.copyOf(layer, layer.length + 1);
        layerWithEnd[layer.length] = endGroup;
        ByteArrayOutputStream inLayer = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(inLayer);
        out.writeByteArray(4, layerWithEnd);
        out.flush();

        for (byte[] wire : List.of(new byte[] {endGroup}, new byte[] {0x10, 0x01, endGroup}, inLayer.toByteArray())) {
            assertThatThrownBy(() -> SaveRequest.parseFrom(wire)).isInstanceOf(InvalidProtocolBufferException.class);
            assertThatThrownBy(() -> SaveWire.decode(wire, 0, wire.length))
                    .isInstanceOf(InvalidProtocolBufferException.class);
        }
    }

    @Test
    void shouldDecodeAMessageInsideALargerBuffer() throws Exception {
        byte[] message = SaveRequest.newBuilder()
                .setInstanceId("i")
                .addSaves(layer("a", List.of(4, 5), "x", "y"))
                .build()
                .toByteArray();
        byte[] buf = new byte[message.length + 20];
        java.util.Arrays.fill(buf, (byte) 0xFF);
        System.arraycopy(message, 0, buf, 7, message.length);

        SaveCall call = SaveWire.decode(buf, 7, message.length);

        assertThat(call.instanceId()).isEqualTo("i");
        assertThat(call.layers().get(0).blockIds()).containsExactly(4, 5);
    }
}
