package io.pegaflow.core.engine;

import io.pegaflow.core.memory.PinnedMemoryPool;

/**
 * How much of the pinned pool one request may need (decision 0011, defect 5): at most
 * {@code pega.limits.request-pool-share} of the pool in all, and no single allocation larger than a shard can ever
 * hold. Checked on the request's real sizes before anything is allocated, so a Save or a push whose staging cannot fit
 * fails without evicting a single block of any tenant (the reclaimer would otherwise empty the index for a request that
 * fails anyway).
 */
final class RequestShare {
    private final double share;
    private final long poolBytes;
    private final long maxRequestBytes;
    private final long maxAllocationBytes;

    private RequestShare(double share, long poolBytes, long maxAllocationBytes) {
        this.share = share;
        this.poolBytes = poolBytes;
        this.maxRequestBytes = (long) Math.floor(poolBytes * share);
        this.maxAllocationBytes = maxAllocationBytes;
    }

    static RequestShare of(PinnedMemoryPool pool, double share) {
        return new RequestShare(share, pool.capacityBytes(), pool.maxAllocationBytes());
    }

    /** {@code a × b}, or {@link Long#MAX_VALUE} when it does not fit (sizes are non-negative). */
    static long saturatingProduct(long a, long b) {
        long high = Math.multiplyHigh(a, b);
        long low = a * b;
        return high != 0 || low < 0 ? Long.MAX_VALUE : low;
    }

    /** {@code a + b}, or {@link Long#MAX_VALUE} when it does not fit (sizes are non-negative). */
    static long saturatingSum(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }

    /**
     * @param request what needs the memory, as the error names it ("save of instance x")
     * @param neededBytes the pool bytes the whole request allocates
     * @param largestAllocation its largest single allocation
     * @param splitHint how the request could be split into smaller allocations, or "" when it cannot
     * @throws io.pegaflow.core.error.EngineException RESOURCE_EXHAUSTED naming the bound
     */
    void check(String request, long neededBytes, long largestAllocation, String splitHint) {
        if (neededBytes > maxRequestBytes) {
            throw EngineLimits.exhausted(
                    request + " needs " + neededBytes + " bytes of pinned pool memory, more than one request may take ("
                            + maxRequestBytes + " of the " + poolBytes + "-byte pool); nothing was evicted",
                    "pega.limits.request-pool-share",
                    share);
        }
        if (largestAllocation > maxAllocationBytes) {
            throw EngineLimits.exhausted(
                    request + " needs one " + largestAllocation
                            + "-byte pool allocation, more than a pool shard holds (" + maxAllocationBytes + " bytes"
                            + splitHint + "); nothing was evicted",
                    "pega.pool.shards",
                    poolBytes / maxAllocationBytes);
        }
    }
}
