package io.pegaflow.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import com.google.protobuf.WireFormat;
import io.pegaflow.core.engine.LayerSave;
import io.pegaflow.proto.SaveLayer;
import io.pegaflow.proto.SaveRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link SaveWire} against the generated parser: for random Saves, encoded by the generated classes or by hand (fields
 * in any order, ids packed, unpacked or both, scalars repeated, unknown fields of every wire type, fields of a known
 * number with another wire type), the decoder gives exactly what {@code SaveRequest.parseFrom} followed by a plain
 * conversion gives; for damaged bytes it fails exactly when the generated parser fails. Each case is one seed of
 * {@link Random}, so a failure names the seed that replays it.
 */
@Timeout(60)
class SaveWirePropertyTest {
    static LongStream seeds() {
        return LongStream.range(0, 400);
    }

    /**
     * The case's generator. The seed is mixed first: {@code new Random(s)} for small consecutive {@code s} starts with
     * nearly the same values (every first {@code nextBoolean()} of seeds 0 to 399 is alike), so half the encodings
     * would never be drawn.
     */
    private static Random random(long seed) {
        long z = (seed + 1) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return new Random(z ^ (z >>> 31));
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void shouldDecodeWhatTheGeneratedParserDecodes(long seed) throws Exception {
        Random random = random(seed);
        Encoded encoded = random.nextBoolean() ? generated(random) : byHand(random);

        SaveCall call = SaveWire.decode(encoded.bytes, 0, encoded.bytes.length);

        assertThat(render(call)).isEqualTo(render(oracle(encoded.bytes)));
        for (int l : encoded.repeatsOfFirst) {
            assertThat(call.layers().get(l).blockIds())
                    .as("layer %d repeats the first layer's bytes", l)
                    .isSameAs(call.layers().get(0).blockIds());
            assertThat(call.layers().get(l).blockHashes())
                    .isSameAs(call.layers().get(0).blockHashes());
        }
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void shouldFailExactlyWhereTheGeneratedParserFails(long seed) throws Exception {
        Random random = random(seed);
        byte[] valid = (random.nextBoolean() ? generated(random) : byHand(random)).bytes;
        byte[] damaged = damage(valid, random);

        SaveCall expected = null;
        try {
            expected = oracle(damaged);
        } catch (InvalidProtocolBufferException e) {
            // the decoder must refuse it too
        }
        SaveCall actual = null;
        try {
            actual = SaveWire.decode(damaged, 0, damaged.length);
        } catch (InvalidProtocolBufferException e) {
            // compared below
        }

        assertThat(actual == null).as("decoder refuses").isEqualTo(expected == null);
        if (expected != null && actual != null) {
            assertThat(render(actual)).isEqualTo(render(expected));
        }
    }

    /** The generated parser and the conversion the server made before it had its own decoder. */
    private static SaveCall oracle(byte[] bytes) throws InvalidProtocolBufferException {
        SaveRequest r = SaveRequest.parseFrom(bytes);
        List<LayerSave> layers = new ArrayList<>();
        for (SaveLayer l : r.getSavesList()) {
            List<byte[]> hashes = new ArrayList<>();
            l.getBlockHashesList().forEach(h -> hashes.add(h.toByteArray()));
            layers.add(new LayerSave(
                    l.getLayerName(),
                    l.getBlockIdsList().stream().mapToInt(Integer::intValue).toArray(),
                    hashes));
        }
        return new SaveCall(r.getInstanceId(), r.getTpRank(), r.getDeviceId(), r.getPpRank(), layers);
    }

    private static List<String> render(SaveCall call) {
        List<String> out = new ArrayList<>();
        out.add(call.instanceId() + "|" + call.tpRank() + "|" + call.deviceId() + "|" + call.ppRank());
        for (LayerSave l : call.layers()) {
            StringBuilder s = new StringBuilder(l.layerName()).append('|');
            for (int id : l.blockIds()) {
                s.append(id).append(',');
            }
            s.append('|');
            for (byte[] h : l.blockHashes()) {
                s.append(HexFormat.of().formatHex(h)).append(',');
            }
            out.add(s.toString());
        }
        return out;
    }

    private record Encoded(byte[] bytes, List<Integer> repeatsOfFirst) {}

    /** The logical content of one layer's pairs. */
    private record Pairs(int[] ids, byte[][] hashes) {}

    private static Pairs pairs(Random random) {
        int n = random.nextInt(12);
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = switch (random.nextInt(4)) {
                case 0 -> random.nextInt();
                case 1 -> -1 - random.nextInt(3);
                default -> random.nextInt(5000);
            };
        }
        int hashes = random.nextInt(5) == 0 ? random.nextInt(12) : n;
        byte[][] h = new byte[hashes][];
        for (int i = 0; i < hashes; i++) {
            h[i] = new byte[random.nextInt(5) == 0 ? random.nextInt(3) : 32];
            random.nextBytes(h[i]);
        }
        return new Pairs(ids, h);
    }

    private static String name(Random random) {
        String[] names = {"", "model.layers.0.self_attn", "layer-\u00e9\u4e2d", "x", "model.layers.35.attn"};
        return names[random.nextInt(names.length)] + (random.nextBoolean() ? "" : Integer.toString(random.nextInt(50)));
    }

    private static UnknownFieldSet unknowns(Random random, int firstFreeField) {
        UnknownFieldSet.Builder b = UnknownFieldSet.newBuilder();
        int n = random.nextInt(3);
        for (int i = 0; i < n; i++) {
            UnknownFieldSet.Field.Builder f = UnknownFieldSet.Field.newBuilder();
            switch (random.nextInt(4)) {
                case 0 -> f.addVarint(random.nextLong());
                case 1 -> f.addFixed32(random.nextInt());
                case 2 -> f.addFixed64(random.nextLong());
                default -> f.addLengthDelimited(ByteString.copyFromUtf8("u" + random.nextInt()));
            }
            b.addField(firstFreeField + random.nextInt(40), f.build());
        }
        return b.build();
    }

    /** The generated encoder, with unknown fields; some layers repeat the first one's pairs. */
    private static Encoded generated(Random random) {
        SaveRequest.Builder r = SaveRequest.newBuilder()
                .setInstanceId(name(random))
                .setTpRank(random.nextInt(3) == 0 ? random.nextInt() : random.nextInt(8))
                .setDeviceId(random.nextInt(3) == 0 ? random.nextInt() : random.nextInt(8))
                .setPpRank(random.nextInt(4));
        int layers = random.nextInt(7);
        SaveLayer first = null;
        List<Integer> repeats = new ArrayList<>();
        for (int l = 0; l < layers; l++) {
            SaveLayer layer;
            if (first != null && random.nextBoolean()) {
                layer = first.toBuilder().setLayerName(name(random)).build();
                repeats.add(l);
            } else {
                Pairs p = pairs(random);
                SaveLayer.Builder b = SaveLayer.newBuilder().setLayerName(name(random));
                for (int id : p.ids()) {
                    b.addBlockIds(id);
                }
                for (byte[] h : p.hashes()) {
                    b.addBlockHashes(ByteString.copyFrom(h));
                }
                if (random.nextInt(3) == 0) {
                    b.setUnknownFields(unknowns(random, 4));
                }
                layer = b.build();
            }
            if (first == null) {
                first = layer;
            }
            r.addSaves(layer);
        }
        if (random.nextInt(3) == 0) {
            r.setUnknownFields(unknowns(random, 6));
        }
        return new Encoded(r.build().toByteArray(), repeats);
    }

    /**
     * A hand encoding: every field an item, the items of each kind in their order but the kinds interleaved at
     * random, with decoy scalar values before the real ones, ids split over packed runs and single varints, and
     * unknown fields (including groups and known numbers of another wire type) anywhere.
     */
    private static Encoded byHand(Random random) throws IOException {
        List<List<byte[]>> top = new ArrayList<>();
        top.add(scalarItems(random, () -> stringField(1, name(random))));
        top.add(scalarItems(random, () -> varintField(2, random.nextInt())));
        top.add(scalarItems(random, () -> varintField(3, random.nextInt(3) - 1)));
        top.add(scalarItems(random, () -> varintField(5, random.nextInt(9))));
        List<byte[]> layers = new ArrayList<>();
        List<Integer> repeats = new ArrayList<>();
        byte[] firstPairs = null;
        boolean firstClean = false;
        int count = random.nextInt(7);
        for (int l = 0; l < count; l++) {
            boolean repeat = firstPairs != null && random.nextBoolean();
            boolean clean = repeat || random.nextBoolean(); // names lead, then only pairs and unknowns
            byte[] pairsBytes = repeat ? firstPairs : pairsBytes(random, pairs(random), !clean);
            ByteArrayOutputStream layer = new ByteArrayOutputStream();
            for (int n = random.nextInt(3); n > 0; n--) {
                layer.write(stringField(1, name(random)));
            }
            layer.write(pairsBytes);
            if (firstPairs == null) {
                firstPairs = pairsBytes;
                firstClean = clean;
            } else if (repeat && firstClean) {
                repeats.add(l);
            }
            layers.add(lengthField(4, layer.toByteArray()));
        }
        top.add(layers);
        top.add(unknownItems(random, List.of(6, 7, 50, 1 << 20), List.of(1)));
        return new Encoded(interleave(top, random), repeats);
    }

    private static byte[] pairsBytes(Random random, Pairs p, boolean namesAmong) throws IOException {
        List<byte[]> ids = new ArrayList<>();
        int i = 0;
        while (i < p.ids().length) {
            int run = 1 + random.nextInt(p.ids().length - i);
            if (random.nextBoolean()) {
                ByteArrayOutputStream packed = new ByteArrayOutputStream();
                CodedOutputStream out = CodedOutputStream.newInstance(packed);
                for (int k = i; k < i + run; k++) {
                    out.writeInt32NoTag(p.ids()[k]);
                }
                out.flush();
                ids.add(lengthField(2, packed.toByteArray()));
            } else {
                for (int k = i; k < i + run; k++) {
                    ids.add(varintField(2, p.ids()[k]));
                }
            }
            i += run;
        }
        if (random.nextInt(4) == 0) {
            ids.add(lengthField(2, new byte[0])); // an empty packed run adds nothing
        }
        List<byte[]> hashes = new ArrayList<>();
        for (byte[] h : p.hashes()) {
            hashes.add(lengthField(3, h));
        }
        List<List<byte[]>> kinds = new ArrayList<>(List.of(ids, hashes));
        kinds.add(unknownItems(random, List.of(4, 5, 99), List.of(3)));
        if (namesAmong) {
            kinds.add(List.of(stringField(1, name(random))));
        }
        return interleave(kinds, random);
    }

    /** One to three values of a scalar; the last is the one a parser keeps. */
    private static List<byte[]> scalarItems(Random random, ItemSource source) throws IOException {
        List<byte[]> out = new ArrayList<>();
        int n = random.nextInt(4) == 0 ? 0 : 1 + random.nextInt(3);
        for (int i = 0; i < n; i++) {
            out.add(source.next());
        }
        return out;
    }

    private interface ItemSource {
        byte[] next() throws IOException;
    }

    /**
     * Unknown fields: numbers from {@code free}, or a number of {@code lengthKnown} (a known bytes field) written as
     * a varint or fixed, which a parser skips too.
     */
    private static List<byte[]> unknownItems(Random random, List<Integer> free, List<Integer> lengthKnown)
            throws IOException {
        List<byte[]> out = new ArrayList<>();
        for (int n = random.nextInt(3); n > 0; n--) {
            boolean known = random.nextInt(4) == 0;
            int field = known ? lengthKnown.get(0) : free.get(random.nextInt(free.size()));
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            CodedOutputStream out2 = CodedOutputStream.newInstance(bytes);
            switch (known ? random.nextInt(3) : random.nextInt(5)) {
                case 0 -> out2.writeUInt64(field, random.nextLong());
                case 1 -> out2.writeFixed32(field, random.nextInt());
                case 2 -> out2.writeFixed64(field, random.nextLong());
                case 3 -> out2.writeString(field, "unknown");
                default -> {
                    out2.writeTag(field, WireFormat.WIRETYPE_START_GROUP);
                    out2.writeUInt32(1, 7);
                    out2.writeString(2, "in a group");
                    out2.writeTag(field, WireFormat.WIRETYPE_END_GROUP);
                }
            }
            out2.flush();
            out.add(bytes.toByteArray());
        }
        return out;
    }

    private static byte[] interleave(List<List<byte[]>> kinds, Random random) {
        int[] next = new int[kinds.size()];
        int left = kinds.stream().mapToInt(List::size).sum();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (left > 0) {
            int k = random.nextInt(kinds.size());
            if (next[k] < kinds.get(k).size()) {
                out.writeBytes(kinds.get(k).get(next[k]++));
                left--;
            }
        }
        return out.toByteArray();
    }

    private static byte[] stringField(int field, String value) throws IOException {
        return lengthField(field, value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private static byte[] lengthField(int field, byte[] value) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        out.writeByteArray(field, value);
        out.flush();
        return bytes.toByteArray();
    }

    private static byte[] varintField(int field, int value) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        out.writeInt32(field, value);
        out.flush();
        return bytes.toByteArray();
    }

    /** Truncation, a changed byte, an inserted byte or a stray end-group tag (anywhere, or where a field starts). */
    private static byte[] damage(byte[] valid, Random random) {
        if (valid.length == 0) {
            return new byte[] {(byte) random.nextInt(256)};
        }
        int at = random.nextInt(valid.length);
        byte endGroup = (byte) ((9 << 3) | WireFormat.WIRETYPE_END_GROUP);
        return switch (random.nextInt(5)) {
            case 0 -> java.util.Arrays.copyOf(valid, at);
            case 1 -> {
                byte[] out = valid.clone();
                out[at] = (byte) random.nextInt(256);
                yield out;
            }
            case 2 -> insert(valid, at, new byte[] {(byte) random.nextInt(256)});
            case 3 -> insert(valid, at, new byte[] {endGroup});
            default -> insert(valid, random.nextBoolean() ? 0 : valid.length, new byte[] {endGroup}); // at a field
        };
    }

    private static byte[] insert(byte[] valid, int at, byte[] extra) {
        byte[] out = new byte[valid.length + extra.length];
        System.arraycopy(valid, 0, out, 0, at);
        System.arraycopy(extra, 0, out, at, extra.length);
        System.arraycopy(valid, at, out, at + extra.length, valid.length - at);
        return out;
    }
}
