package io.pegaflow.concurrency.memory;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pegaflow.concurrency.Pools;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * Claim ({@code PinnedAllocation#release}: "from then on the address must not be used", and only then is it reusable):
 * an allocation racing the last release of another range gets either nothing or exactly the range being freed, never
 * a range that is still live.
 *
 * <p>A full two-unit shard: unit 0 is being freed, unit 1 stays held. r1: the unit the racing allocation got (-1 for
 * none); r2: used units after everything is released.
 */
@JCStressTest
@Outcome(id = "-1, 0", expect = ACCEPTABLE, desc = "allocation ran before the free; shard full")
@Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "allocation reused the freed unit")
@Outcome(expect = FORBIDDEN, desc = "the live unit handed out twice, or broken accounting")
@State
public class AllocateRacingFreeNeverReturnsLiveRange {
    private final PinnedMemoryPool pool = Pools.ofUnits(2);
    private final PinnedAllocation freed =
            Objects.requireNonNull(pool.allocate(Pools.UNIT_BYTES), "a fresh pool of two units has room");
    private final PinnedAllocation held =
            Objects.requireNonNull(pool.allocate(Pools.UNIT_BYTES), "a fresh pool of two units has room");
    private @Nullable PinnedAllocation raced; // null when the allocation found no free unit

    @Actor
    public void free() {
        freed.release();
    }

    @Actor
    public void allocate() {
        raced = pool.allocate(Pools.UNIT_BYTES);
    }

    @Arbiter
    public void arbiter(II_Result r) {
        r.r1 = Pools.unitIndex(pool, raced);
        if (raced != null) {
            raced.release();
        }
        held.release();
        r.r2 = Pools.usedUnits(pool);
        pool.close();
    }
}
