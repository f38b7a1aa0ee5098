package io.pegaflow.server.grpc;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.WireFormat;
import io.pegaflow.core.engine.LayerSave;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Decodes a {@code SaveRequest} (engine.proto of {@code novitalabs/pegaflow} v0.22.4) from its bytes straight into the
 * engine's arguments, without the generated message's object per element: block ids go into an {@code int[]}, each
 * hash into one {@code byte[]}, and a layer whose ids and hashes are the same bytes as the first layer's (the
 * connector sends every layer the same pairs) shares the first layer's arrays after one comparison of the raw bytes,
 * so a 36-layer Save decodes its 1024 hashes once. The engine recognises the shared arrays and skips comparing such
 * layers element by element.
 *
 * <p>Reads what any conforming encoder may send, as the generated parser does: fields in any order, {@code block_ids}
 * packed or not (or both), unknown fields (and fields of a known number with another wire type) skipped, the last
 * value of a scalar kept, absent fields at their defaults, strings checked as UTF-8. What the generated parser refuses
 * this refuses too, with {@link InvalidProtocolBufferException}.
 */
final class SaveWire {
    private static final int INSTANCE_ID = tag(1, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int TP_RANK = tag(2, WireFormat.WIRETYPE_VARINT);
    private static final int DEVICE_ID = tag(3, WireFormat.WIRETYPE_VARINT);
    private static final int SAVES = tag(4, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int PP_RANK = tag(5, WireFormat.WIRETYPE_VARINT);
    private static final int LAYER_NAME = tag(1, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int BLOCK_ID = tag(2, WireFormat.WIRETYPE_VARINT);
    private static final int BLOCK_IDS_PACKED = tag(2, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int BLOCK_HASH = tag(3, WireFormat.WIRETYPE_LENGTH_DELIMITED);

    private SaveWire() {}

    private static int tag(int field, int wireType) {
        return (field << 3) | wireType;
    }

    /**
     * Decodes {@code length} bytes of {@code buf} from {@code offset}. The result holds no reference to {@code buf},
     * which the caller may reuse.
     */
    static SaveCall decode(byte[] buf, int offset, int length) throws InvalidProtocolBufferException {
        try {
            return new Decoder(buf, offset, length).request();
        } catch (InvalidProtocolBufferException e) {
            throw e;
        } catch (IOException e) { // a byte array never fails to read; only the parser's own exception remains
            throw new InvalidProtocolBufferException(e);
        }
    }

    /** One request's decoding state: the input and the first layer, whose pairs later layers may share. */
    private static final class Decoder {
        private final byte[] buf;
        private final int offset;
        private final CodedInputStream in;
        private int[] scratch = new int[64];
        // The first layer: where its pairs' bytes lie (from its first non-name field to its end), whether no name
        // field hides among them, and what they decoded to.
        private boolean haveFirst;
        private boolean firstShareable;
        private int firstPairsFrom;
        private int firstPairsTo;
        private int[] firstIds = new int[0];
        private List<byte[]> firstHashes = List.of();

        Decoder(byte[] buf, int offset, int length) {
            this.buf = buf;
            this.offset = offset;
            this.in = CodedInputStream.newInstance(buf, offset, length);
        }

        /** The absolute index in {@code buf} of the next byte to read. */
        private int position() {
            return offset + in.getTotalBytesRead();
        }

        SaveCall request() throws IOException {
            String instanceId = "";
            int tpRank = 0;
            int deviceId = 0;
            int ppRank = 0;
            List<LayerSave> layers = new ArrayList<>();
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                if (tag == INSTANCE_ID) {
                    instanceId = in.readStringRequireUtf8();
                } else if (tag == TP_RANK) {
                    tpRank = in.readUInt32();
                } else if (tag == DEVICE_ID) {
                    deviceId = in.readInt32();
                } else if (tag == SAVES) {
                    layers.add(layer());
                } else if (tag == PP_RANK) {
                    ppRank = in.readUInt32();
                } else {
                    skip(tag);
                }
            }
            return new SaveCall(instanceId, tpRank, deviceId, ppRank, layers);
        }

        /** One embedded {@code SaveLayer}, its length not yet read. */
        private LayerSave layer() throws IOException {
            int oldLimit = in.pushLimit(in.readRawVarint32());
            int end = position() + in.getBytesUntilLimit();
            String name = "";
            int pairsFrom = position();
            int tag = in.readTag();
            while (tag == LAYER_NAME) {
                name = in.readStringRequireUtf8();
                pairsFrom = position();
                tag = in.readTag();
            }
            if (haveFirst && firstShareable && Arrays.equals(buf, pairsFrom, end, buf, firstPairsFrom, firstPairsTo)) {
                in.skipRawBytes(end - position());
                in.popLimit(oldLimit);
                return new LayerSave(name, firstIds, firstHashes);
            }
            int idCount = 0;
            List<byte[]> hashes = new ArrayList<>();
            boolean nameAmongPairs = false;
            for (; tag != 0; tag = in.readTag()) {
                if (tag == BLOCK_ID) {
                    idCount = add(idCount, in.readInt32());
                } else if (tag == BLOCK_IDS_PACKED) {
                    int packedLimit = in.pushLimit(in.readRawVarint32());
                    while (in.getBytesUntilLimit() > 0) {
                        idCount = add(idCount, in.readInt32());
                    }
                    in.popLimit(packedLimit);
                } else if (tag == BLOCK_HASH) {
                    hashes.add(in.readByteArray());
                } else if (tag == LAYER_NAME) {
                    name = in.readStringRequireUtf8();
                    nameAmongPairs = true;
                } else {
                    skip(tag);
                }
            }
            in.popLimit(oldLimit);
            int[] ids = Arrays.copyOf(scratch, idCount);
            if (!haveFirst) {
                haveFirst = true;
                firstShareable = !nameAmongPairs;
                firstPairsFrom = pairsFrom;
                firstPairsTo = end;
                firstIds = ids;
                firstHashes = hashes;
            }
            return new LayerSave(name, ids, hashes);
        }

        private int add(int count, int id) {
            if (count == scratch.length) {
                scratch = Arrays.copyOf(scratch, count * 2);
            }
            scratch[count] = id;
            return count + 1;
        }

        /**
         * Skips an unknown field. An end-group tag with no group open fails a generated parse; protobuf-java 4's
         * {@code skipField} refuses it already, and older ones return false, which fails here the same way.
         */
        private void skip(int tag) throws IOException {
            if (!in.skipField(tag)) {
                throw new InvalidProtocolBufferException("Protocol message end-group tag did not match expected tag.");
            }
        }
    }
}
