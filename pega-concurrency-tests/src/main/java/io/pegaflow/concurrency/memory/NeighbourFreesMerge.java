package io.pegaflow.concurrency.memory;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pegaflow.concurrency.Pools;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import java.util.Objects;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * Claim ({@code PoolShard}, {@code OffsetAllocator}): frees of two physical neighbours from two threads leave the shard
 * consistent, with the two ranges merged back into one free region, and the pool's accounting back at zero.
 *
 * <p>A two-unit shard filled by two one-unit allocations makes them neighbours. r1: used units after both frees; r2:
 * whether a two-unit allocation then succeeds (only a merged region can serve it); r3: allocations outstanding at the
 * end.
 */
@JCStressTest
@Outcome(id = "0, 1, 0", expect = ACCEPTABLE, desc = "both frees landed and merged")
@Outcome(expect = FORBIDDEN, desc = "lost free, unmerged neighbours, or broken accounting")
@State
public class NeighbourFreesMerge {
    private final PinnedMemoryPool pool = Pools.ofUnits(2);
    private final PinnedAllocation left =
            Objects.requireNonNull(pool.allocate(Pools.UNIT_BYTES), "a fresh pool of two units has room");
    private final PinnedAllocation right =
            Objects.requireNonNull(pool.allocate(Pools.UNIT_BYTES), "a fresh pool of two units has room");

    @Actor
    public void freeLeft() {
        left.release();
    }

    @Actor
    public void freeRight() {
        right.release();
    }

    @Arbiter
    public void arbiter(III_Result r) {
        r.r1 = Pools.usedUnits(pool);
        PinnedAllocation whole = pool.allocate(2 * Pools.UNIT_BYTES);
        r.r2 = whole == null ? 0 : 1;
        if (whole != null) {
            whole.release();
        }
        r.r3 = pool.outstandingAllocations();
        pool.close();
    }
}
