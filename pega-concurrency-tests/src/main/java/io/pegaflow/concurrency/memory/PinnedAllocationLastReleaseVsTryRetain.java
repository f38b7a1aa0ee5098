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
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * Claim ({@code PinnedAllocation}): "the slice is freed exactly once" and "the count can never rise again" after the
 * release that brought it to 0. A {@code tryRetain()} racing the last release either holds a slice that is still in
 * the pool's used bytes, or fails; the shard gets the slice back exactly once and can hand it out again.
 *
 * <p>A one-unit pool per state makes the pool's own counters exact for this allocation. r1: tryRetain succeeded; r2:
 * used units while the upgrader held it (-1 when it held nothing); r3: used units at the end (-1 is a double free);
 * r4: the unit could be allocated again.
 */
@JCStressTest
@Outcome(id = "1, 1, 0, 1", expect = ACCEPTABLE, desc = "upgrade won; slice returned once, by the upgrader")
@Outcome(id = "0, -1, 0, 1", expect = ACCEPTABLE, desc = "last release won; upgrade refused, slice returned once")
@Outcome(expect = FORBIDDEN, desc = "upgrade of a freed slice, double free, or a slice lost to the pool")
@State
public class PinnedAllocationLastReleaseVsTryRetain {
    private final PinnedMemoryPool pool = Pools.ofUnits(1);
    private final PinnedAllocation allocation =
            Objects.requireNonNull(pool.allocate(Pools.UNIT_BYTES), "a fresh pool of one unit has room");

    @Actor
    public void lastOwner() {
        allocation.release();
    }

    @Actor
    public void upgrader(IIII_Result r) {
        if (allocation.tryRetain()) {
            r.r1 = 1;
            r.r2 = Pools.usedUnits(pool);
            allocation.release();
        } else {
            r.r1 = 0;
            r.r2 = -1;
        }
    }

    @Arbiter
    public void arbiter(IIII_Result r) {
        r.r3 = Pools.usedUnits(pool);
        PinnedAllocation again = pool.allocate(Pools.UNIT_BYTES);
        r.r4 = again == null ? 0 : 1;
        if (again != null) {
            again.release();
        }
        pool.close();
    }
}
