package io.pegaflow.core.tier;

import io.pegaflow.core.memory.PinnedAllocation;
import org.jspecify.annotations.Nullable;

/**
 * Pool memory for blocks a tier re-materialises, evicting unreferenced RAM blocks when the pool is full (the path Save
 * takes). The engine builds it before anything runs and hands it to a tier with every fetch, so a tier needs nothing
 * from the engine to be built and never holds the engine.
 *
 * <p>Thread-safe. Called from the tiers' own threads, never under an engine lock. It may wait, with a deadline, for
 * queued Saves to be sealed before it gives up.
 */
@FunctionalInterface
public interface ReclaimingAllocator {
    /**
     * Allocates {@code bytes} of pool memory, evicting RAM blocks if the pool is full.
     *
     * @return an allocation with one reference owned by the caller, or null when the pool stays full after reclaim
     */
    @Nullable
    PinnedAllocation allocate(long bytes);
}
