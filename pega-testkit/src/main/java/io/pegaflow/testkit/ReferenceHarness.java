package io.pegaflow.testkit;

import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Constants and presets of the reference's mock vLLM end-to-end harness ({@code pegaflow-server/tests/common/mod.rs} of
 * novitalabs/pegaflow v0.22.4), so conformance tests read like the scenarios they port.
 *
 * <p>Stateless; thread-safe.
 */
public final class ReferenceHarness {
    public static final String INSTANCE_ID = "mock-vllm-rpc-e2e";
    public static final String SECOND_INSTANCE_ID = "mock-vllm-rpc-e2e-second";
    public static final String NAMESPACE = "mock-vllm";
    public static final String LAYER_NAME = "layer_0";
    public static final int NUM_BLOCKS = 4;
    public static final int BLOCK_BYTES = 1024;
    public static final int NUM_LAYERS = 1;
    /** One layer of 4 contiguous blocks × 1024 B (K = 0, G = 1). */
    public static final KvLayout LAYOUT = KvLayout.contiguous(NUM_BLOCKS, BLOCK_BYTES);
    /** The reference harness runs its server with a 16 MiB pool. */
    public static final long POOL_SIZE_BYTES = 16L * 1024 * 1024;
    /** How long the harness waits for a load state. */
    public static final Duration LOAD_TIMEOUT = Duration.ofSeconds(5);
    /** The harness's polling interval for queries. */
    public static final Duration POLL_INTERVAL = Duration.ofMillis(10);

    private ReferenceHarness() {}

    /** A worker builder for {@link #INSTANCE_ID} with the reference layer. */
    public static MockVllmWorker.Builder worker(String host, int port) {
        return MockVllmWorker.builder(host, port).layer(LAYER_NAME, LAYOUT);
    }

    /** A worker builder for {@link #SECOND_INSTANCE_ID} (same namespace, device and layer). */
    public static MockVllmWorker.Builder secondWorker(String host, int port) {
        return worker(host, port).instanceId(SECOND_INSTANCE_ID);
    }

    /** Block ids {@code 0..count-1}. */
    public static List<Integer> blockIds(int count) {
        return blockIds(0, count);
    }

    /** Block ids {@code fromInclusive..toExclusive-1}. */
    public static List<Integer> blockIds(int fromInclusive, int toExclusive) {
        return IntStream.range(fromInclusive, toExclusive).boxed().toList();
    }
}
