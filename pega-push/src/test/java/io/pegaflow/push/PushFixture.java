package io.pegaflow.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LayerRegion;
import io.pegaflow.testkit.MockVllmWorker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;

/** Mock workers for push tests: KV layers in shm "GPU memory", filled per layer, compared byte for byte. */
final class PushFixture {
    static final int LAYERS = 6;
    /** FlashAttention's KV-first tensor: K and V planes apart, two segments of 16 x 2 x 64 x 2 = 4 KiB per block. */
    static final KvLayout LAYOUT = KvLayout.kvFirst(64, 16, 2, 64, 2);

    private PushFixture() {}

    static List<String> layerNames() {
        return IntStream.range(0, LAYERS)
                .mapToObj(i -> "model.layers." + i + ".self_attn")
                .toList();
    }

    /** A worker whose channel is never used for Engine RPCs (it only owns the layer memory). */
    static MockVllmWorker worker(String instanceId, int tpRank, int tpSize, int port) {
        return MockVllmWorker.builder("127.0.0.1", port)
                .instanceId(instanceId)
                .tp(tpRank, tpSize)
                .sharedLayers(layerNames(), LAYOUT)
                .build();
    }

    /** Writes layer {@code l}'s blocks as a forward pass would: a pattern per layer, rank and block id. */
    static void writeLayer(MockVllmWorker w, int l, List<Long> blocks, long salt) {
        LayerRegion layer = w.layers().get(l);
        BlockPattern p = BlockPattern.perByte(salt).forSlot(layer.name(), w.tpRank());
        int bytes = (int) layer.layout().rangeBytes();
        for (long b : blocks) {
            for (int r = 0; r < layer.layout().rangesPerBlock(); r++) {
                layer.memory().writeBytes(layer.rangeOffset((int) b, r), p.bytes((int) b, (long) r * bytes, bytes));
            }
        }
    }

    /**
     * The first difference between prefill layer {@code l} at {@code from} and decode layer {@code l} at {@code to},
     * position by position, or empty when every byte is equal.
     */
    static Optional<String> layerMismatch(
            MockVllmWorker prefill, MockVllmWorker decode, int l, List<Long> from, List<Long> to) {
        LayerRegion src = prefill.layers().get(l);
        LayerRegion dst = decode.layers().get(l);
        int bytes = (int) src.layout().rangeBytes();
        for (int p = 0; p < from.size(); p++) {
            for (int r = 0; r < src.layout().rangesPerBlock(); r++) {
                byte[] a = src.memory().readBytes(src.rangeOffset(from.get(p).intValue(), r), bytes);
                byte[] b = dst.memory().readBytes(dst.rangeOffset(to.get(p).intValue(), r), bytes);
                if (!Arrays.equals(a, b)) {
                    return Optional.of("layer " + l + " position " + p + " range " + r + ": prefill block "
                            + from.get(p) + " differs from decode block " + to.get(p) + " at byte "
                            + Arrays.mismatch(a, b));
                }
            }
        }
        return Optional.empty();
    }

    /** Whether decode layer {@code l} is still all zero at {@code blocks}. */
    static boolean layerZero(MockVllmWorker decode, int l, List<Long> blocks) {
        LayerRegion dst = decode.layers().get(l);
        int bytes = (int) dst.layout().rangeBytes();
        for (long b : blocks) {
            for (int r = 0; r < dst.layout().rangesPerBlock(); r++) {
                for (byte x : dst.memory().readBytes(dst.rangeOffset((int) b, r), bytes)) {
                    if (x != 0) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    static void assertLayerEqual(MockVllmWorker prefill, MockVllmWorker decode, int l, List<Long> from, List<Long> to) {
        assertThat(layerMismatch(prefill, decode, l, from, to)).isEmpty();
    }

    static List<Long> blocks(long... ids) {
        List<Long> out = new ArrayList<>();
        for (long id : ids) {
            out.add(id);
        }
        return out;
    }
}
