package io.pegaflow.concurrency.cache;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pegaflow.core.cache.EvictedBlocks;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * The reclaim path ({@code evictColdest}, a pool allocation that needs room) racing a lease of the only resident
 * block: the victim check and the query's retain never interleave, so the block is either leased and skipped, or
 * evicted and not found; never freed while leased, freed exactly once when evicted.
 *
 * <p>r1: the query leased {@code a}; r2: frees of {@code a} seen while leased (-1 without a lease); r3: blocks the
 * reclaim evicted; r4: frees of {@code a} at the end, before cleanup.
 */
@JCStressTest
@Outcome(id = "1, 0, 0, 0", expect = ACCEPTABLE, desc = "leased; reclaim skipped it")
@Outcome(id = "1, 0, 1, 1", expect = ACCEPTABLE, desc = "leased and released, then evicted and freed once")
@Outcome(id = "0, -1, 1, 1", expect = ACCEPTABLE, desc = "evicted and freed once; the query missed")
@Outcome(expect = FORBIDDEN, desc = "freed while leased, double free, or leak")
@State
public class CaffeineReclaimVsLease {
    private final CaffeineFixture f = new CaffeineFixture();

    @Actor
    public void query(IIII_Result r) {
        int[] lease = f.leaseA();
        r.r1 = lease[0];
        r.r2 = lease[1];
    }

    @Actor
    public void reclaim(IIII_Result r) {
        EvictedBlocks evicted = f.cache.evictColdest(1);
        r.r3 = evicted.count();
        evicted.releaseAll();
    }

    @Arbiter
    public void arbiter(IIII_Result r) {
        r.r4 = f.freesOfA();
        f.residentThenDispose(false);
        f.disposeWitnesses();
    }
}
