package io.pegaflow.concurrency.block;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pegaflow.concurrency.WitnessedBlock;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * Claim ({@code SealedBlock#release}): when two holders drop the last two references at once, exactly one of them
 * frees the slots' memory, exactly once, and the count ends at 0.
 *
 * <p>r1: frees; r2: the final reference count.
 */
@JCStressTest
@Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "freed exactly once")
@Outcome(expect = FORBIDDEN, desc = "double free, leak, or a count that is off")
@State
public class SealedBlockConcurrentReleasesFreeOnce {
    private final WitnessedBlock witnessed = new WitnessedBlock();

    public SealedBlockConcurrentReleasesFreeOnce() {
        witnessed.block().retain();
    }

    @Actor
    public void cache() {
        witnessed.block().release();
    }

    @Actor
    public void lease() {
        witnessed.block().release();
    }

    @Arbiter
    public void arbiter(II_Result r) {
        r.r1 = witnessed.frees();
        r.r2 = witnessed.block().refCount();
        witnessed.dispose();
    }
}
