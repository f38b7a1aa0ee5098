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
 * Claim ({@code LeaseTable}: release goes to GONE from any state, and "the last consume hands over the lease's own"
 * references): the last consume racing an explicit release either takes the lease's reference (and the release
 * finds nothing), or the release drops it once (and the consume is told "unknown or expired"). Never both, never
 * neither.
 *
 * <p>r1: the consumer got the block (1) or "unknown or expired" (0); r2: release found the lease; r3: the block's
 * count afterwards.
 */
@JCStressTest
@Outcome(id = "1, 0, 2", expect = ACCEPTABLE, desc = "consume won; the consumer holds the lease's reference")
@Outcome(id = "0, 1, 1", expect = ACCEPTABLE, desc = "release won and dropped the lease's reference once")
@Outcome(expect = FORBIDDEN, desc = "both or neither ended the lease, or a reference released twice or never")
@State
public class ConsumeVsRelease {
    private final LeaseFixture fixture = new LeaseFixture(1);

    @Actor
    public void load(III_Result r) {
        r.r1 = fixture.consume();
    }

    @Actor
    public void release(III_Result r) {
        r.r2 = fixture.table().release(fixture.id()) ? 1 : 0;
    }

    @Arbiter
    public void arbiter(III_Result r) {
        r.r3 = fixture.blockRefs();
        fixture.dispose();
    }
}
