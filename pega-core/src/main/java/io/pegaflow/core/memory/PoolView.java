package io.pegaflow.core.memory;

import io.pegaflow.kernel.memory.MemoryRegionInfo;
import java.util.List;

/**
 * What the pool shows to those who only read it (metrics, the dashboard, the startup summary): sizes and counts, no
 * allocation and no close. Memory is taken through the engine's allocators, never from a view.
 */
public interface PoolView {
    long capacityBytes();

    long usedBytes();

    /** The largest allocation that could succeed now without eviction. */
    long largestFreeBytes();

    /** Allocations not yet released (0 after every test: nothing leaked). */
    int outstandingAllocations();

    /** How long mapping and pre-touching the pool took. */
    long readyNanos();

    /** Each shard's mapping. */
    List<MemoryRegionInfo> regions();

    PoolConfig config();
}
