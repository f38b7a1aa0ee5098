package io.pegaflow.concurrency.lease;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * Claim ({@code LeaseTable}: expiry goes to GONE from any state, and "everything that ends a lease releases [its
 * references] exactly once"): a load consuming a lease while the clock passes its TTL and the sweeper runs either gets
 * the blocks and keeps its reference, or is told "unknown or expired" and the lease's reference is released once, by
 * whichever sweep (the sweeper's or the one inside consume) saw the expiry first.
 *
 * <p>r1: the consumer got the block (1) or "unknown or expired" (0); r2: leases the sweeper ended; r3: the block's
 * count afterwards.
 */
@JCStressTest
@Outcome(id = "1, 0, 2", expect = ACCEPTABLE, desc = "consumed before the expiry; the consumer holds a reference")
@Outcome(id = "0, 1, 1", expect = ACCEPTABLE, desc = "the sweeper expired the lease and released it once")
@Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "consume's own sweep saw the new time and released it once")
@Outcome(expect = FORBIDDEN, desc = "consumed and expired both, or a reference released twice or never")
@State
public class ConsumeVsExpirySweep {
    private final LeaseFixture fixture = new LeaseFixture(1);

    @Actor
    public void load(III_Result r) {
        r.r1 = fixture.consume();
    }

    @Actor
    public void sweeper(III_Result r) {
        fixture.expire();
        r.r2 = fixture.table().sweep();
    }

    @Arbiter
    public void arbiter(III_Result r) {
        r.r3 = fixture.blockRefs();
        fixture.dispose();
    }
}
