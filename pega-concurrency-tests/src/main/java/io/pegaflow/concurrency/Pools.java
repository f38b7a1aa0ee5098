package io.pegaflow.concurrency;

import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import org.jspecify.annotations.Nullable;

/** Pinned pools for jcstress states: one shared pool per forked VM, or a tiny private pool per state. */
public final class Pools {
    /** The allocator unit of every pool here (no size hint, so the default 512 bytes). */
    public static final long UNIT_BYTES = 512;

    /** Big enough for every state of a stride to hold a few units at once. */
    private static final long SHARED_BYTES = 64L << 20;

    private Pools() {}

    private static final class Shared {
        static final PinnedMemoryPool POOL = PinnedMemoryPool.create(PoolConfig.of(SHARED_BYTES));
    }

    /**
     * One unit from the pool all states of this VM share; a real allocation without a mapping per state.
     *
     * @throws IllegalStateException when the shared pool is exhausted (a leak in the test or in the code under test)
     */
    public static PinnedAllocation allocateShared() {
        PinnedAllocation allocation = Shared.POOL.allocate(UNIT_BYTES);
        if (allocation == null) {
            throw new IllegalStateException("shared pool exhausted: " + Shared.POOL.usedBytes() + " bytes used");
        }
        return allocation;
    }

    /**
     * A private single-shard pool of exactly {@code units} units. The allocator starts empty, so where each
     * allocation lands is known, and the pool's counters belong to one state alone.
     */
    public static PinnedMemoryPool ofUnits(int units) {
        return PinnedMemoryPool.create(PoolConfig.of(units * UNIT_BYTES));
    }

    /** The first unit {@code allocation} covers, counted from the start of {@code pool}'s only shard; -1 for null. */
    public static int unitIndex(PinnedMemoryPool pool, @Nullable PinnedAllocation allocation) {
        if (allocation == null) {
            return -1;
        }
        return (int) ((allocation.address() - pool.regions().get(0).address()) / UNIT_BYTES);
    }

    /** Units in use; negative when an allocation was given back twice. */
    public static int usedUnits(PinnedMemoryPool pool) {
        return (int) (pool.usedBytes() / UNIT_BYTES);
    }
}
