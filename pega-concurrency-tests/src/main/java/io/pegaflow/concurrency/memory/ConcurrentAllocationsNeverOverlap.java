package io.pegaflow.concurrency.memory;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pegaflow.concurrency.Pools;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import org.jspecify.annotations.Nullable;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * Claim ({@code PinnedMemoryPool}, "thread-safe"; {@code PoolShard} serialises its allocator under a lock): two
 * threads allocating from one shard at once get disjoint ranges. The allocator itself is not thread-safe, so this is
 * tested at the pool, the level that claims thread safety.
 *
 * <p>The shard holds exactly three units; one thread asks for one unit, the other for two, so both fit only if neither
 * range overlaps the other. r1, r2: the first unit of each allocation (-1 for none); r3: whether a further unit could
 * still be allocated (it must not: the shard is full).
 */
@JCStressTest
@Outcome(id = "0, 1, 0", expect = ACCEPTABLE, desc = "one-unit request served first: [0,1) and [1,3)")
@Outcome(id = "2, 0, 0", expect = ACCEPTABLE, desc = "two-unit request served first: [0,2) and [2,3)")
@Outcome(expect = FORBIDDEN, desc = "overlapping ranges, a refused request, or space that was never handed out")
@State
public class ConcurrentAllocationsNeverOverlap {
    private final PinnedMemoryPool pool = Pools.ofUnits(3);
    // null when the allocation found no room
    private @Nullable PinnedAllocation small;
    private @Nullable PinnedAllocation large;

    @Actor
    public void allocateOneUnit() {
        small = pool.allocate(Pools.UNIT_BYTES);
    }

    @Actor
    public void allocateTwoUnits() {
        large = pool.allocate(2 * Pools.UNIT_BYTES);
    }

    @Arbiter
    public void arbiter(III_Result r) {
        r.r1 = Pools.unitIndex(pool, small);
        r.r2 = Pools.unitIndex(pool, large);
        PinnedAllocation extra = pool.allocate(Pools.UNIT_BYTES);
        r.r3 = extra == null ? 0 : 1;
        for (@Nullable PinnedAllocation a : new @Nullable PinnedAllocation[] {small, large, extra}) {
            if (a != null) {
                a.release();
            }
        }
        pool.close();
    }
}
