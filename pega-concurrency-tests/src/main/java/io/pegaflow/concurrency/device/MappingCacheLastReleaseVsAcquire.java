package io.pegaflow.concurrency.device;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pegaflow.core.device.MappingCache;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * Claim ({@code MappingCache}): a layer closing the last reference on a mapping while another registration acquires
 * the same handle either shares the still-open mapping (one open in total) or gets a fresh one opened only after the
 * old one was closed. A handle is never mapped twice at once (CUDA refuses to open an IPC handle twice in one
 * process) and a mapping is closed exactly once.
 *
 * <p>r1: opens in total; r2: closes in total after the acquirer released too; r3: the most mappings of the handle
 * that were open at the same time.
 */
@JCStressTest
@Outcome(id = "1, 1, 1", expect = ACCEPTABLE, desc = "acquire shared the open mapping; closed once at the end")
@Outcome(id = "2, 2, 1", expect = ACCEPTABLE, desc = "last release closed it first; acquire reopened it")
@Outcome(expect = FORBIDDEN, desc = "mapped twice at once, closed twice, or leaked")
@State
public class MappingCacheLastReleaseVsAcquire {
    private final AtomicInteger opens = new AtomicInteger();
    private final AtomicInteger closes = new AtomicInteger();
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicInteger maxOpen = new AtomicInteger();
    private final MappingCache<String, Integer> cache = new MappingCache<>(
            key -> {
                maxOpen.accumulateAndGet(open.incrementAndGet(), Math::max);
                return opens.incrementAndGet();
            },
            mapping -> {
                open.decrementAndGet();
                closes.incrementAndGet();
            });
    private final MappingCache.Entry<String, Integer> first = cache.acquire("handle");
    private MappingCache.@Nullable Entry<String, Integer> second; // set by the registration actor

    @Actor
    public void lastLayerCloses() {
        first.release();
    }

    @Actor
    public void registration() {
        second = cache.acquire("handle");
    }

    @Arbiter
    public void arbiter(III_Result r) {
        // jcstress runs the arbiter after every actor of the state has returned
        Objects.requireNonNull(second, "the registration actor ran").release();
        r.r1 = opens.get();
        r.r2 = closes.get();
        r.r3 = maxOpen.get();
    }
}
