package io.pegaflow.core.memory;

/**
 * How to build a {@link PinnedMemoryPool}.
 *
 * @param capacityBytes total bytes over all shards; each shard maps {@code capacityBytes / shards} (the remainder is
 *     dropped), at least one allocator unit
 * @param shards independent regions, each with its own allocator and lock; at least 1
 * @param hugePages back the shards with huge pages ({@code MAP_HUGETLB}, falling back to transparent huge pages)
 * @param numaNode NUMA node to bind the shards' pages to before first touch, or -1 for the kernel's default placement
 * @param hintValueSizeBytes typical allocation size, used as the allocator unit (rounded up to 512); 0 for none
 * @param pretouchThreads threads that pre-fault each shard, or 0 to pick {@code min(ceil(size / 1 GiB), cores)}
 */
public record PoolConfig(
        long capacityBytes, int shards, boolean hugePages, int numaNode, long hintValueSizeBytes, int pretouchThreads) {

    /** The {@code numaNode} value that disables binding. */
    public static final int NO_NUMA_NODE = -1;

    /** @throws IllegalArgumentException naming the first field that is out of range */
    public PoolConfig {
        if (capacityBytes <= 0) {
            throw new IllegalArgumentException("capacityBytes must be > 0, was " + capacityBytes);
        }
        if (shards < 1) {
            throw new IllegalArgumentException("shards must be >= 1, was " + shards);
        }
        if (numaNode < NO_NUMA_NODE) {
            throw new IllegalArgumentException("numaNode must be >= -1 (-1 = no binding), was " + numaNode);
        }
        if (hintValueSizeBytes < 0) {
            throw new IllegalArgumentException("hintValueSizeBytes must be >= 0 (0 = none), was " + hintValueSizeBytes);
        }
        if (pretouchThreads < 0) {
            throw new IllegalArgumentException("pretouchThreads must be >= 0 (0 = auto), was " + pretouchThreads);
        }
    }

    /** A single-shard pool on regular pages, without NUMA binding, hint or explicit pre-touch threads. */
    public static PoolConfig of(long capacityBytes) {
        return new PoolConfig(capacityBytes, 1, false, NO_NUMA_NODE, 0, 0);
    }

    /** Bytes each shard maps before unit and huge-page rounding. */
    public long shardCapacityBytes() {
        return capacityBytes / shards;
    }
}
