package io.pegaflow.server.grpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.Internal;
import io.pegaflow.core.engine.LayerSave;
import io.pegaflow.proto.SaveLayer;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes a Save's layers into the engine's {@link LayerSave}s without an object per block where it can: block ids are
 * read from protobuf's primitive list (no boxing), and a layer whose ids and hashes equal the first layer's (the
 * connector sends every layer the same pairs) shares the first layer's arrays instead of copying 1024 hashes again.
 * The engine recognises the shared arrays and skips comparing such layers element by element.
 */
final class SaveWire {
    private SaveWire() {}

    static List<LayerSave> layers(List<SaveLayer> wire) {
        List<LayerSave> out = new ArrayList<>(wire.size());
        SaveLayer first = null;
        int[] firstIds = null;
        List<byte[]> firstHashes = null;
        for (SaveLayer layer : wire) {
            if (first != null && firstIds != null && firstHashes != null && samePairs(first, layer)) {
                out.add(new LayerSave(layer.getLayerName(), firstIds, firstHashes));
                continue;
            }
            int[] ids = ints(layer.getBlockIdsList());
            List<byte[]> hashes = bytes(layer.getBlockHashesList());
            out.add(new LayerSave(layer.getLayerName(), ids, hashes));
            if (first == null) {
                first = layer;
                firstIds = ids;
                firstHashes = hashes;
            }
        }
        return out;
    }

    /** Same ids and same hashes, in the same order (hashes compared by content, without copying them). */
    private static boolean samePairs(SaveLayer a, SaveLayer b) {
        if (a.getBlockIdsCount() != b.getBlockIdsCount() || a.getBlockHashesCount() != b.getBlockHashesCount()) {
            return false;
        }
        List<Integer> ai = a.getBlockIdsList();
        List<Integer> bi = b.getBlockIdsList();
        if (ai instanceof Internal.IntList x && bi instanceof Internal.IntList y) {
            for (int i = 0; i < x.size(); i++) {
                if (x.getInt(i) != y.getInt(i)) {
                    return false;
                }
            }
        } else if (!ai.equals(bi)) {
            return false;
        }
        List<ByteString> ah = a.getBlockHashesList();
        List<ByteString> bh = b.getBlockHashesList();
        for (int i = 0; i < ah.size(); i++) {
            if (!ah.get(i).equals(bh.get(i))) {
                return false;
            }
        }
        return true;
    }

    static int[] ints(List<Integer> values) {
        int[] out = new int[values.size()];
        if (values instanceof Internal.IntList primitive) { // protobuf's own list: read without boxing
            for (int i = 0; i < out.length; i++) {
                out[i] = primitive.getInt(i);
            }
            return out;
        }
        for (int i = 0; i < out.length; i++) {
            out[i] = values.get(i);
        }
        return out;
    }

    static List<byte[]> bytes(List<ByteString> values) {
        List<byte[]> out = new ArrayList<>(values.size());
        for (ByteString b : values) {
            out.add(b.toByteArray());
        }
        return out;
    }
}
