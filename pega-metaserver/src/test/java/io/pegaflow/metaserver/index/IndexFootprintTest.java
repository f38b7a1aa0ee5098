package io.pegaflow.metaserver.index;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.metaserver.node.NodeSession;
import io.pegaflow.metaserver.support.RedisServer;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What one indexed block costs in each backend (docs/metaserver.md, "Sizing"): 100 000 blocks of 32-byte hashes, one
 * owner each, announced by 10 nodes; the memory backend's heap after a full GC, the Redis backend's
 * {@code used_memory} (INFO memory), each against the empty index. Prints the figures; asserts only that they stay in
 * the documented range, since heap accounting moves with the JVM.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class IndexFootprintTest {

    static final int BLOCKS = 100_000;
    static final int NODES = 10;
    static final long STALE_MS = 30_000;
    static final long TTL_MS = 120 * 60_000L;

    @TempDir
    Path dir;

    static List<ByteString> hashes(int from, int count) {
        List<ByteString> out = new ArrayList<>(count);
        for (int i = from; i < from + count; i++) {
            ByteBuffer b = ByteBuffer.allocate(32);
            b.putLong(i).putLong(~(long) i).putLong(i * 0x9E3779B97F4A7C15L).putLong(i ^ 0x5DEECE66DL);
            out.add(ByteString.copyFrom(b.array()));
        }
        return out;
    }

    static long heapAfterGc() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            memory.gc();
            Thread.sleep(50);
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    /** Fills {@code index} with {@link #BLOCKS} blocks, 1024 per insert, round robin over the nodes. */
    static void fill(BlockIndex index, List<NodeSession> nodes) {
        int perNode = BLOCKS / nodes.size();
        for (int n = 0; n < nodes.size(); n++) {
            for (int from = 0; from < perNode; from += 1024) {
                index.insert("model-a", hashes(n * perNode + from, Math.min(1024, perNode - from)), nodes.get(n), 0);
            }
        }
    }

    static List<NodeSession> nodes(Map<String, NodeSession> directory) {
        List<NodeSession> nodes = new ArrayList<>();
        for (int n = 0; n < NODES; n++) {
            NodeSession session = NodeSession.detached("10.70.0." + n + ":50055", UUID.randomUUID(), 0);
            directory.put(session.url(), session);
            nodes.add(session);
        }
        return nodes;
    }

    @Test
    void shouldCostAFewHundredBytesPerBlockInTheHeap() throws Exception {
        List<NodeSession> nodes = nodes(new HashMap<>());
        long before = heapAfterGc();
        BlockOwnerIndex index = new BlockOwnerIndex(4_000_000, 1_000_000, STALE_MS, TTL_MS);
        fill(index, nodes);
        index.cleanUp();
        long after = heapAfterGc();
        double perBlock = (after - before) / (double) BLOCKS;
        System.out.printf(
                "memory index: %.0f bytes of heap per block (%d blocks, %d nodes)%n", perBlock, BLOCKS, NODES);
        assertThat(index.keyCount()).isEqualTo(BLOCKS);
        assertThat(perBlock).isBetween(100.0, 600.0);
    }

    @Test
    void shouldCostAFewHundredBytesPerBlockInRedis() throws Exception {
        try (RedisServer redis = RedisServer.start(dir)) {
            Map<String, NodeSession> directory = new HashMap<>();
            List<NodeSession> nodes = nodes(directory);
            try (RedisBlockIndex index = new RedisBlockIndex(
                    RedisConnection.open(redis.uri(), List.of(), Duration.ofSeconds(10)),
                    directory::get,
                    1_000_000,
                    STALE_MS,
                    TTL_MS,
                    1,
                    Duration.ofSeconds(10))) {
                long before = redis.usedMemory();
                fill(index, nodes);
                long after = redis.usedMemory();
                double perBlock = (after - before) / (double) BLOCKS;
                System.out.printf(
                        "redis index: %.0f bytes of used_memory per block (%d blocks, %d nodes)%n",
                        perBlock, BLOCKS, NODES);
                assertThat(index.keyCount()).isEqualTo(BLOCKS);
                assertThat(index.ownerCount()).isEqualTo(BLOCKS);
                assertThat(perBlock).isBetween(100.0, 600.0);
            }
        }
    }
}
