package io.pegaflow.server.faults;

import com.google.protobuf.ByteString;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockVllmWorker;
import java.util.List;
import java.util.stream.IntStream;

/** What the killed worker process and the test that checks after it agree on: layout, batches, contents. */
final class FaultWorkers {
    static final String NAMESPACE = "faults";
    static final int BLOCKS = 16;
    static final int BLOCKS_PER_BATCH = 4;
    static final int BATCHES = 40;
    static final KvLayout LAYOUT = KvLayout.contiguous(BLOCKS, 16 * 1024);

    private FaultWorkers() {}

    static MockVllmWorker.Builder worker(int port, String instanceId) {
        return MockVllmWorker.builder("127.0.0.1", port)
                .instanceId(instanceId)
                .namespace(NAMESPACE)
                .layer("layer_0", LAYOUT)
                .layer("layer_1", LAYOUT);
    }

    /** The device blocks batch {@code b} is saved from (and loaded back into). */
    static List<Integer> ids(int b) {
        int first = (b % (BLOCKS / BLOCKS_PER_BATCH)) * BLOCKS_PER_BATCH;
        return IntStream.range(first, first + BLOCKS_PER_BATCH).boxed().toList();
    }

    static List<ByteString> hashes(int b) {
        return BlockPattern.hashes(70_000 + b * 100, BLOCKS_PER_BATCH);
    }

    static BlockPattern pattern(int b) {
        return BlockPattern.perByte(1_000 + b);
    }
}
