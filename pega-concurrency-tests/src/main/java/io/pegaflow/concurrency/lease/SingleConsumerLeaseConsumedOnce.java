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
 * Claim ({@code LeaseTable}, state machine {@code ACTIVE(1) -consume-> GONE}): of two loads consuming a lease made for
 * {@code world_size} 1, exactly one gets the blocks, taking over the lease's reference; the other is told the lease is
 * unknown or expired. No reference is created or lost.
 *
 * <p>r1, r2: each consumer got the block (1) or "unknown or expired" (0); r3: the block's count afterwards (the
 * cache's reference plus the winner's).
 */
@JCStressTest
@Outcome(id = "1, 0, 2", expect = ACCEPTABLE, desc = "first consumer won")
@Outcome(id = "0, 1, 2", expect = ACCEPTABLE, desc = "second consumer won")
@Outcome(expect = FORBIDDEN, desc = "both or neither consumed, or a reference created or lost")
@State
public class SingleConsumerLeaseConsumedOnce {
    private final LeaseFixture fixture = new LeaseFixture(1);

    @Actor
    public void firstLoad(III_Result r) {
        r.r1 = fixture.consume();
    }

    @Actor
    public void secondLoad(III_Result r) {
        r.r2 = fixture.consume();
    }

    @Arbiter
    public void arbiter(III_Result r) {
        r.r3 = fixture.blockRefs();
        fixture.dispose();
    }
}
