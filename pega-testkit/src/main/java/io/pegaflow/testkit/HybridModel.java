package io.pegaflow.testkit;

import com.google.protobuf.ByteString;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;

/**
 * A hybrid model as pegaflow-llm 0.23.11+ registers it (upstream {@code novitalabs/pegaflow} #433): attention layers in
 * storage group 0 (K/V first, one block per 16 tokens) and a recurrent-state layer in group 1 whose block holds one
 * state tensor of another size. Its connector saves attention for every block and state only at checkpoints (here the
 * blocks of hashes 3 and 7, into state blocks 5 and 6), and loads both groups in one grouped Load.
 */
public final class HybridModel {
    /** A connector that sends {@code layer_group_ids}: the newest release on PyPI, on the v0.23.12 wire. */
    public static final ConnectorRelease RELEASE = ConnectorRelease.V0_23_12.withVersion("0.25.1");

    public static final KvLayout ATTENTION = KvLayout.kvFirst(8, 16, 1, 16, 2);
    /** One 1536-byte state tensor per block: another size per block than attention's 2 × 512 bytes. */
    public static final KvLayout STATE = KvLayout.contiguous(8, 1536);

    public static final List<String> ATTENTION_LAYERS = List.of("model.layers.0.self_attn", "model.layers.2.self_attn");
    public static final List<String> STATE_LAYERS = List.of("model.layers.1.linear_attn");

    /** The blocks a save covers: 8 attention blocks, two of them with a state checkpoint. */
    public static final int BLOCKS = 8;
    /** Positions (indices into the hashes) of the checkpoints. */
    public static final List<Integer> CHECKPOINTS = List.of(3, 7);
    /** The state blocks the checkpoints are saved from and loaded into. */
    public static final List<Integer> STATE_BLOCKS = List.of(5, 6);

    private HybridModel() {}

    /** Adds the model's layers and groups, and the release, to a worker. */
    public static MockVllmWorker.Builder layers(MockVllmWorker.Builder b) {
        return layers(b, ATTENTION, STATE);
    }

    /**
     * As {@link #layers(MockVllmWorker.Builder)} with other layouts (each of at least {@link #BLOCKS} blocks), e.g.
     * larger ones to fill a pool.
     */
    public static MockVllmWorker.Builder layers(MockVllmWorker.Builder b, KvLayout attention, KvLayout state) {
        for (String layer : ATTENTION_LAYERS) {
            b.layer(layer, attention).group(layer, 0);
        }
        for (String layer : STATE_LAYERS) {
            b.layer(layer, state).group(layer, 1);
        }
        return b.connector(RELEASE);
    }

    /** Attention block ids 0..7. */
    public static List<Integer> attentionBlocks() {
        return IntStream.range(0, BLOCKS).boxed().toList();
    }

    /** The hashes of the checkpoints among {@code hashes}. */
    public static List<ByteString> checkpointHashes(List<ByteString> hashes) {
        return CHECKPOINTS.stream().map(hashes::get).toList();
    }

    /** Fills both groups with {@code pattern} and saves them in one request: attention for 8 blocks, 2 checkpoints. */
    public static void saveWithCheckpoints(MockVllmWorker w, List<ByteString> hashes, BlockPattern pattern) {
        w.fillBlocks(ATTENTION_LAYERS, attentionBlocks(), pattern);
        w.fillBlocks(STATE_LAYERS, STATE_BLOCKS, statePattern(pattern));
        w.save(List.of(
                new LayerBlocks(ATTENTION_LAYERS, attentionBlocks(), hashes),
                new LayerBlocks(STATE_LAYERS, STATE_BLOCKS, checkpointHashes(hashes))));
    }

    /** Loads a lease of the 8 attention blocks and a lease of the 2 checkpoints, as the connector does. */
    public static LoadResult loadBoth(
            MockVllmWorker w, ByteString attentionLease, ByteString stateLease, Duration timeout) {
        return w.loadGroups(
                List.of(GroupedLoads.group(ATTENTION_LAYERS), GroupedLoads.group(STATE_LAYERS)),
                List.of(
                        GroupedLoads.lease(
                                attentionLease,
                                List.of(
                                        GroupedLoads.targets(List.copyOf(attentionBlocks())),
                                        GroupedLoads.targets(Collections.nCopies(BLOCKS, null)))),
                        GroupedLoads.lease(
                                stateLease,
                                List.of(
                                        GroupedLoads.targets(Collections.nCopies(STATE_BLOCKS.size(), null)),
                                        GroupedLoads.targets(List.copyOf(STATE_BLOCKS))))),
                timeout);
    }

    /** The first byte of either group that differs from what {@link #saveWithCheckpoints} wrote, if any. */
    public static Optional<String> firstMismatch(MockVllmWorker w, BlockPattern pattern) {
        Optional<String> attention = w.firstMismatch(ATTENTION_LAYERS, attentionBlocks(), pattern);
        return attention.isPresent() ? attention : w.firstMismatch(STATE_LAYERS, STATE_BLOCKS, statePattern(pattern));
    }

    private static BlockPattern statePattern(BlockPattern pattern) {
        return pattern.forSlot("state", 1);
    }
}
