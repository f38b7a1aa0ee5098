package io.pegaflow.core.ssd;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The SSD store's shape ({@code docs/ssd.md} for the defaults).
 *
 * @param paths one file per shard; shards on different drives proceed in parallel
 * @param shardCapacityBytes ring bytes per shard, rounded down to 4 KiB (each file is this plus a 4 KiB superblock)
 * @param writeQueueDepth write batches that may wait for the writer; a full queue drops the batch (8)
 * @param prefetchQueueDepth prefetch batches that may wait for the reader; a full queue answers a miss (2)
 * @param writeInflight block writes in flight at once, over all shards (2)
 * @param prefetchInflight block reads in flight at once, over all shards (16)
 * @param verifyOnStart checksum every payload while rebuilding the index at start (reads every shard fully); off, only
 *     headers are checked at start and payloads when they are read
 */
public record SsdConfig(
        List<Path> paths,
        long shardCapacityBytes,
        int writeQueueDepth,
        int prefetchQueueDepth,
        int writeInflight,
        int prefetchInflight,
        boolean verifyOnStart) {

    public static final int DEFAULT_WRITE_QUEUE_DEPTH = 8;
    public static final int DEFAULT_PREFETCH_QUEUE_DEPTH = 2;
    public static final int DEFAULT_WRITE_INFLIGHT = 2;
    public static final int DEFAULT_PREFETCH_INFLIGHT = 16;

    /** @throws IllegalArgumentException naming the property and the expected range */
    public SsdConfig {
        paths = List.copyOf(paths);
        if (paths.isEmpty()) {
            throw new IllegalArgumentException("pega.ssd.paths: [] (expected: at least one shard file)");
        }
        Set<Path> seen = new HashSet<>();
        for (Path p : paths) {
            if (!seen.add(p.toAbsolutePath().normalize())) {
                throw new IllegalArgumentException(
                        "pega.ssd.paths: " + p + " listed twice (expected: one file per shard)");
            }
        }
        if (shardCapacityBytes < ShardLayoutDescriptor.ENTRY_ALIGNMENT) {
            throw new IllegalArgumentException(
                    "pega.ssd.capacity: " + shardCapacityBytes + " bytes per shard (expected: >= 4KB)");
        }
        shardCapacityBytes = ShardLayoutDescriptor.ringBytes(shardCapacityBytes);
        requireAtLeastOne("pega.ssd.write-queue-depth", writeQueueDepth);
        requireAtLeastOne("pega.ssd.prefetch-queue-depth", prefetchQueueDepth);
        requireAtLeastOne("pega.ssd.write-inflight", writeInflight);
        requireAtLeastOne("pega.ssd.prefetch-inflight", prefetchInflight);
    }

    private static void requireAtLeastOne(String name, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: >= 1)");
        }
    }

    /** Reference defaults for the queues, the total capacity split evenly, payloads verified at start. */
    public static SsdConfig of(List<Path> paths, long totalCapacityBytes) {
        return new SsdConfig(
                paths,
                totalCapacityBytes / Math.max(1, paths.size()),
                DEFAULT_WRITE_QUEUE_DEPTH,
                DEFAULT_PREFETCH_QUEUE_DEPTH,
                DEFAULT_WRITE_INFLIGHT,
                DEFAULT_PREFETCH_INFLIGHT,
                true);
    }

    public SsdConfig withQueues(int writeQueueDepth, int prefetchQueueDepth, int writeInflight, int prefetchInflight) {
        return new SsdConfig(
                paths,
                shardCapacityBytes,
                writeQueueDepth,
                prefetchQueueDepth,
                writeInflight,
                prefetchInflight,
                verifyOnStart);
    }

    public SsdConfig withVerifyOnStart(boolean verify) {
        return new SsdConfig(
                paths,
                shardCapacityBytes,
                writeQueueDepth,
                prefetchQueueDepth,
                writeInflight,
                prefetchInflight,
                verify);
    }
}
