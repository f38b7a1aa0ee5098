package io.pegaflow.core.engine;

/**
 * The answer to a prefix query: still loading from a slower tier, or ready with a hit count and a lease (empty when
 * nothing hit).
 */
public record QueryOutcome(boolean loading, long hitBlocks, byte[] lease) {
    private static final byte[] NO_LEASE = new byte[0];
    public static final QueryOutcome LOADING = new QueryOutcome(true, 0, NO_LEASE);
    public static final QueryOutcome MISS = new QueryOutcome(false, 0, NO_LEASE);

    public static QueryOutcome ready(long hits, byte[] lease) {
        return new QueryOutcome(false, hits, lease);
    }
}
