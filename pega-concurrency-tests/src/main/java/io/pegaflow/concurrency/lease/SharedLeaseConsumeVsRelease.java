package io.pegaflow.concurrency.lease;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * Claim ({@code LeaseTable}: "a consume that leaves the lease alive hands out new references"): with {@code
 * world_size} 2, a consume racing a release of the lease either takes a new reference before the release drops the
 * lease's own (which the release does outside the table's monitor), or finds the lease gone. The consumer's reference
 * never disappears under it, and the block is never freed while the cache's reference exists.
 *
 * <p>r1: the consumer got the block (1) or "unknown or expired" (0); r2: release found the lease; r3: the block's
 * count afterwards; r4: frees of the block's memory.
 */
@JCStressTest
@Outcome(
        id = "1, 1, 2, 0",
        expect = ACCEPTABLE,
        desc = "consume took a new reference, then release dropped the lease's")
@Outcome(id = "0, 1, 1, 0", expect = ACCEPTABLE, desc = "release ended the lease first; consume refused")
@Outcome(expect = FORBIDDEN, desc = "a reference lost, created or released twice")
@State
public class SharedLeaseConsumeVsRelease {
    private final LeaseFixture fixture = new LeaseFixture(2);

    @Actor
    public void load(IIII_Result r) {
        r.r1 = fixture.consume();
    }

    @Actor
    public void release(IIII_Result r) {
        r.r2 = fixture.table().release(fixture.id()) ? 1 : 0;
    }

    @Arbiter
    public void arbiter(IIII_Result r) {
        r.r3 = fixture.blockRefs();
        r.r4 = fixture.frees();
        fixture.dispose();
    }
}
