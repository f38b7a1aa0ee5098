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
 * Claim ({@code SealedBlock#retain} and {@code #tryRetain}): a {@code retain()} of a block that was already freed is
 * refused with an exception and never brings the block back, so a concurrent {@code tryRetain()} still sees it as freed.
 * The stray retain is a bug in some caller; the point is that detecting it must not turn it into a use-after-free in an
 * innocent thread.
 *
 * <p>The first actor drops the only reference and then tries to upgrade, as a background tier would; the second calls
 * {@code retain()} without holding a reference. r1: the upgrade succeeded; r2: the stray retain succeeded (1) or threw
 * (0); r3: frees before cleanup.
 */
@JCStressTest
@Outcome(id = "1, 1, 0", expect = ACCEPTABLE, desc = "retain ran while the block was alive; nothing freed")
@Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "retain refused after the free; upgrade refused")
@Outcome(id = "1, 0, 1", expect = FORBIDDEN, desc = "upgrade succeeded on freed memory (retain's undo window)")
@Outcome(expect = FORBIDDEN, desc = "double free, leak, or a count that is off")
@State
public class SealedBlockStrayRetainVsTryRetain {
    private final WitnessedBlock witnessed = new WitnessedBlock();

    @Actor
    public void lastOwnerThenUpgrader(III_Result r) {
        witnessed.block().release();
        r.r1 = witnessed.block().tryRetain() ? 1 : 0;
    }

    @Actor
    public void strayRetain(III_Result r) {
        try {
            witnessed.block().retain();
            r.r2 = 1;
        } catch (IllegalStateException refused) {
            r.r2 = 0;
        }
    }

    @Arbiter
    public void arbiter(III_Result r) {
        r.r3 = witnessed.frees();
        witnessed.dispose();
    }
}
