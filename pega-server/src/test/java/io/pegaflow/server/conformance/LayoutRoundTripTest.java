package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.proto.LeaseLoad;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ShmDeviceMemory;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Byte-exact save → query → load round trips for every layout the connector registers, with a per-byte pattern that
 * also catches K/V swaps, shifted copies and data landing in another layer. Bytes a block does not own (between split
 * planes, other blocks) must stay untouched.
 */
@Timeout(120)
class LayoutRoundTripTest extends ConformanceSupport {
    private static final String ID = "layouts";
    private static final BlockPattern PATTERN = BlockPattern.perByte(0xC0FFEE);

    static Stream<Arguments> layouts() {
        return Stream.of(
                // FlashAttention (2, nb, bs, h, d): the reference's split test, B = 512, K = 4096.
                Arguments.of("kv-first split", "layer_0", KvLayout.kvFirst(8, 16, 1, 16, 2)),
                Arguments.of("kv-first bf16 multi-head", "layer_0", KvLayout.kvFirst(6, 16, 4, 8, 2)),
                // One block: K == B, so both planes are one contiguous 2·B range.
                Arguments.of("kv-first single block", "layer_0", KvLayout.kvFirst(1, 16, 2, 16, 2)),
                Arguments.of("blocks-first", "layer_0", KvLayout.blocksFirst(8, 16, 2, 16, 2)),
                Arguments.of(
                        "cross-layer ALL_LAYERS",
                        KvLayout.crossLayerName(0, 1),
                        KvLayout.crossLayer(6, 3, 16, 1, 16, 2)),
                Arguments.of("MLA 64-token rows under 128-token blocks", "layer_0", KvLayout.mla(8, 64, 576, 2, 128)),
                Arguments.of("odd block size", "layer_0", KvLayout.contiguous(5, 1000)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("layouts")
    void shouldRoundTripLayoutByteExact(String label, String layerName, KvLayout layout) {
        int n = (int) layout.numBlocks();
        try (MockVllmWorker w = bareWorker(ID).layer(layerName, layout).build()) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes32(layout.hashCode() & 0x7F, n);
            w.fillBlocks(blockIds(n), PATTERN);
            w.save(blockIds(n), hashes);
            QueryReady ready = awaitReady(ID, hashes, n, "layout");

            w.layers().get(0).memory().zero();
            assertThat(w.load(ready.getLease(), blockIds(n)).succeeded()).isTrue();

            w.verifyBlocks(blockIds(n), PATTERN);
            assertOnlyOwnedBytesWritten(w.layers().get(0).memory(), layout);
        }
    }

    /** Every byte outside the blocks' owned ranges must still be zero after the load. */
    private static void assertOnlyOwnedBytesWritten(ShmDeviceMemory memory, KvLayout layout) {
        boolean[] owned = new boolean[(int) layout.tensorBytes()];
        for (int b = 0; b < layout.numBlocks(); b++) {
            for (int r = 0; r < layout.rangesPerBlock(); r++) {
                long from = layout.rangeOffset(b, r);
                for (long i = from; i < from + layout.rangeBytes(); i++) {
                    owned[(int) i] = true;
                }
            }
        }
        byte[] all = memory.readBytes(0, (int) layout.tensorBytes());
        for (int i = 0; i < all.length; i++) {
            if (!owned[i] && all[i] != 0) {
                throw new AssertionError("byte " + i + " outside every owned range was written");
            }
        }
    }

    @Test
    void shouldRoundTripSplitLayoutIntoOtherBlockIds() {
        KvLayout layout = KvLayout.kvFirst(8, 16, 1, 16, 2);
        try (MockVllmWorker w = bareWorker(ID).layer("layer_0", layout).build()) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(90, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            w.save(blockIds(4), hashes);
            QueryReady ready = awaitReady(ID, hashes, 4, "moved");
            w.zeroBlocks(blockIds(8));

            assertThat(w.load(ready.getLease(), List.of(7, 5, 6, 4)).succeeded())
                    .isTrue();

            w.verifyZeroed(blockIds(4));
            ShmDeviceMemory memory = w.layers().get(0).memory();
            BlockPattern slot = PATTERN.forSlot("layer_0", 0);
            int[] target = {7, 5, 6, 4};
            for (int i = 0; i < 4; i++) {
                long k = layout.rangeOffset(target[i], 0);
                long v = layout.rangeOffset(target[i], 1);
                int b = (int) layout.bytesPerBlock();
                assertThat(memory.readBytes(k, b))
                        .as("K plane of %d", target[i])
                        .isEqualTo(slot.bytes(i, 0, b));
                assertThat(memory.readBytes(v, b))
                        .as("V plane of %d", target[i])
                        .isEqualTo(slot.bytes(i, b, b));
            }
        }
    }

    @Test
    void shouldRoundTripTwoLayersSharingOneShmObject() {
        KvLayout layout = KvLayout.kvFirst(4, 16, 1, 16, 2);
        try (MockVllmWorker w = bareWorker(ID)
                .sharedLayers(List.of("layer_0", "layer_1"), layout)
                .build()) {
            assertThat(w.layers().get(0).memory()).isSameAs(w.layers().get(1).memory());
            w.register();
            assertThat(mappingsOf(shmOf(w)))
                    .as("one server mapping for both layers")
                    .isEqualTo(2);
            List<ByteString> hashes = BlockPattern.hashes(91, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            w.save(blockIds(4), hashes);
            QueryReady ready = awaitReady(ID, hashes, 4, "shared");

            w.layers().get(0).memory().zero();
            assertThat(w.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();

            w.verifyBlocks(blockIds(4), PATTERN);
        }
    }

    @Test
    void shouldRoundTripOneLayerOfEachLayoutInOneInstance() {
        try (MockVllmWorker w = bareWorker(ID)
                .layer("split", KvLayout.kvFirst(4, 16, 1, 16, 2))
                .layer("blocks_first", KvLayout.blocksFirst(4, 16, 1, 16, 2))
                .layer("mla", KvLayout.mla(8, 32, 64, 2, 64))
                .build()) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(92, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            w.save(blockIds(4), hashes);
            QueryReady ready = awaitReady(ID, hashes, 4, "mixed");

            w.zeroBlocks(blockIds(4));
            assertThat(w.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();

            w.verifyBlocks(blockIds(4), PATTERN);
        }
    }

    @Test
    void shouldLoadOnlyTheRequestedLayers() {
        try (MockVllmWorker w = bareWorker(ID)
                .layer("layer_0", KvLayout.contiguous(4, 512))
                .layer("layer_1", KvLayout.contiguous(4, 512))
                .build()) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(93, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            w.save(blockIds(4), hashes);
            QueryReady ready = awaitReady(ID, hashes, 4, "one-layer");
            w.zeroBlocks(blockIds(4));

            var result = w.load(
                    List.of(LeaseLoad.newBuilder()
                            .setLease(ready.getLease())
                            .addAllBlockIds(blockIds(4))
                            .build()),
                    List.of("layer_1"),
                    Duration.ofSeconds(5));

            assertThat(result.succeeded()).isTrue();
            assertThat(w.layers().get(0).memory().readBytes(0, 2048)).containsOnly(0);
            assertThat(w.layers().get(1).memory().readBytes(0, 512))
                    .isEqualTo(PATTERN.forSlot("layer_1", 0).bytes(0, 0, 512));
        }
    }

    @Test
    void shouldSealCrossLayerBlocksOnlyOnceEveryPipelineStageSaved() {
        KvLayout layout = KvLayout.crossLayer(4, 2, 16, 1, 16, 2);
        String stage0 = KvLayout.crossLayerName(0, 2);
        String stage1 = KvLayout.crossLayerName(1, 2);
        try (MockVllmWorker pp0 = bareWorker(ID)
                        .layer(stage0, layout)
                        .numLayers(1)
                        .worldSize(2)
                        .build();
                MockVllmWorker pp1 = bareWorker(ID)
                        .layer(stage1, layout)
                        .numLayers(1)
                        .worldSize(2)
                        .deviceId(1)
                        .ppRank(1)
                        .build()) {
            assertThat(stage1).isEqualTo("ALL_LAYERS_pp1");
            pp0.register();
            pp1.register();
            List<ByteString> hashes = BlockPattern.hashes32(94, 4);
            pp0.fillBlocks(blockIds(4), PATTERN);
            pp1.fillBlocks(blockIds(4), PATTERN);

            pp0.save(blockIds(4), hashes);
            engine.flushSeals();
            QueryReady half = scheduler.queryUntilReady(ID, hashes, "one-stage", WAIT);
            assertThat(half.getNumHitBlocks()).as("stage 1 has not saved yet").isZero();
            pp1.save(blockIds(4), hashes);
            QueryReady ready = awaitReady(ID, hashes, 4, "both-stages");

            pp0.zeroBlocks(blockIds(4));
            pp1.zeroBlocks(blockIds(4));
            assertThat(pp0.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            assertThat(pp1.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            pp0.verifyBlocks(blockIds(4), PATTERN);
            pp1.verifyBlocks(blockIds(4), PATTERN);
        }
    }

    @Test
    void shouldShareOneMlaSlotBetweenTpReplicas() {
        // MLA without DCP: effective tp 1 on every real rank, all ranks register the same layer; only rank 0 saves.
        KvLayout layout = KvLayout.mla(8, 64, 64, 2, 128);
        try (MockVllmWorker rank0 =
                        bareWorker(ID).layer("layer_0", layout).worldSize(2).build();
                MockVllmWorker rank1 = bareWorker(ID)
                        .layer("layer_0", layout)
                        .worldSize(2)
                        .deviceId(1)
                        .build()) {
            rank0.register();
            rank1.register();
            List<ByteString> hashes = BlockPattern.hashes32(95, 4);
            rank0.fillBlocks(blockIds(4), PATTERN);
            rank0.save(blockIds(4), hashes);
            QueryReady ready = awaitReady(ID, hashes, 4, "mla");

            assertThat(rank0.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            assertThat(rank1.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();

            rank1.verifyBlocks(blockIds(4), PATTERN);
            assertThat(engine.activeLeases())
                    .as("world_size loads consumed the lease")
                    .isZero();
        }
    }

    @Test
    void shouldFailLoadIntoALayerWithLargerBlocksThanStored() {
        // Two instances of one namespace that disagree on the layout: the stored block is too small for the target.
        try (MockVllmWorker small = bareWorker(ID)
                        .layer("layer_0", KvLayout.contiguous(4, 1024))
                        .build();
                MockVllmWorker large = bareWorker("layouts-large")
                        .layer("layer_0", KvLayout.contiguous(4, 2048))
                        .build()) {
            small.register();
            large.register();
            List<ByteString> hashes = BlockPattern.hashes32(96, 4);
            small.fillBlocks(blockIds(4), PATTERN);
            small.save(blockIds(4), hashes);
            scheduler.awaitSealed(ID, hashes, WAIT);
            QueryReady ready = scheduler.queryUntilReady("layouts-large", hashes, "large", WAIT);
            assertThat(ready.getNumHitBlocks()).isEqualTo(4);

            var load = large.load(ready.getLease(), blockIds(4));

            assertThat(load.rpcOk()).isTrue();
            assertThat(load.shmState())
                    .as("refused on the load lane, nothing copied")
                    .isNegative();
            large.verifyZeroed(blockIds(4));
        }
    }
}
