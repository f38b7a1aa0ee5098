package io.pegaflow.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.core.engine.LayerSave;
import io.pegaflow.proto.SaveLayer;
import io.pegaflow.proto.SaveRequest;
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

    /** Through the wire, so the lists are protobuf's own (parsed), as the server sees them. */
    private static List<LayerSave> decode(SaveLayer... layers) throws Exception {
        SaveRequest parsed = SaveRequest.parseFrom(
                SaveRequest.newBuilder().addAllSaves(List.of(layers)).build().toByteArray());
        return SaveWire.layers(parsed.getSavesList());
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
}
