package io.pegaflow.concurrency.block;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pegaflow.concurrency.WitnessedBlock;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * Claim ({@code SealedBlock#tryRetain}): the weak-reference upgrade used by background tiers (the SSD writer) either
 * gets a live block, which then stays allocated until that holder releases it, or fails because the last release
 * already freed it. The memory is freed exactly once either way.
 *
 * <p>r1: tryRetain succeeded (1) or not (0); r2: frees seen while the upgrader held its reference (-1 when it held
 * none); r3: frees in total.
 */
@JCStressTest
@Outcome(id = "1, 0, 1", expect = ACCEPTABLE, desc = "upgrade won; memory freed once, by the upgrader's release")
@Outcome(id = "0, -1, 1", expect = ACCEPTABLE, desc = "last release won; upgrade refused, memory freed once")
@Outcome(expect = FORBIDDEN, desc = "upgrade of freed memory, double free, or leak")
@State
public class SealedBlockLastReleaseVsTryRetain {
    private final WitnessedBlock witnessed = new WitnessedBlock();

    @Actor
    public void lastOwner() {
        witnessed.block().release();
    }

    @Actor
    public void upgrader(III_Result r) {
        if (witnessed.block().tryRetain()) {
            r.r1 = 1;
            r.r2 = witnessed.frees();
            witnessed.block().release();
        } else {
            r.r1 = 0;
            r.r2 = -1;
        }
    }

    @Arbiter
    public void arbiter(III_Result r) {
        r.r3 = witnessed.frees();
        witnessed.dispose();
    }
}
