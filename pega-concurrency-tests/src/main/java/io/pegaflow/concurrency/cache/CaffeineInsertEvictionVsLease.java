package io.pegaflow.concurrency.cache;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pegaflow.core.cache.InsertOutcome;
import java.util.List;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * Caffeine's insert-time eviction racing a lease ({@code TinyLfuBlockCache}): inserting {@code b} into an index whose
 * budget holds one block makes W-TinyLFU evict {@code a} or turn {@code b} away, while a query leases {@code a}. A
 * leased block is never a victim: {@code a} is never freed while the query holds it, and it is freed exactly once
 * if and only if it left the index.
 *
 * <p>r1: the query leased {@code a}; r2: frees of {@code a} seen while leased (-1 without a lease); r3: {@code a}
 * still resident at the end; r4: frees of {@code a} at the end, before cleanup.
 */
@JCStressTest
@Outcome(id = "1, 0, 1, 0", expect = ACCEPTABLE, desc = "leased; a stays (put back, or b turned away)")
@Outcome(id = "1, 0, 0, 1", expect = ACCEPTABLE, desc = "leased and released, then a evicted and freed once")
@Outcome(id = "0, -1, 0, 1", expect = ACCEPTABLE, desc = "a evicted and freed once before the query")
@Outcome(expect = FORBIDDEN, desc = "freed while leased, double free, or leak")
@State
public class CaffeineInsertEvictionVsLease {
    private final CaffeineFixture f = new CaffeineFixture();
    private volatile boolean bRejected;

    @Actor
    public void query(IIII_Result r) {
        int[] lease = f.leaseA();
        r.r1 = lease[0];
        r.r2 = lease[1];
    }

    @Actor
    public void insert() {
        InsertOutcome[] outcome = new InsertOutcome[1];
        f.cache.insertAll(List.of(CaffeineFixture.B), List.of(f.b.block()), outcome);
        bRejected = outcome[0] == InsertOutcome.REJECTED;
    }

    @Arbiter
    public void arbiter(IIII_Result r) {
        r.r4 = f.freesOfA();
        r.r3 = f.residentThenDispose(bRejected);
        f.disposeWitnesses();
    }
}
