package io.pegaflow.core.engine;

/**
 * The answer to a query: still loading from a slower tier, or ready with a hit count and a lease (empty when nothing
 * is pinned). {@code hitPositions} answers a membership query of a hybrid state group (upstream {@code
 * QueryReady.hit_positions}): the ascending indices of the requested hashes that hit, as many as {@code hitBlocks},
 * the lease holding exactly those blocks in that order; it is empty for a prefix query (group 0).
 */
public record QueryOutcome(boolean loading, long hitBlocks, byte[] lease, int[] hitPositions) {
    private static final byte[] NO_LEASE = new byte[0];
    private static final int[] NO_POSITIONS = new int[0];
    public static final QueryOutcome LOADING = new QueryOutcome(true, 0, NO_LEASE, NO_POSITIONS);
    public static final QueryOutcome MISS = new QueryOutcome(false, 0, NO_LEASE, NO_POSITIONS);

    /** A prefix answer. */
    public static QueryOutcome ready(long hits, byte[] lease) {
        return new QueryOutcome(false, hits, lease, NO_POSITIONS);
    }

    /** A membership answer: {@code positions.length} hits, leased in {@code positions} order (no lease when empty). */
    public static QueryOutcome members(int[] positions, byte[] lease) {
        return new QueryOutcome(false, positions.length, lease, positions);
    }

    /** An all-or-nothing set fetch that came up short: the leading hits are counted, nothing is pinned. */
    static QueryOutcome shortSet(int found) {
        int[] positions = new int[found];
        for (int i = 0; i < found; i++) {
            positions[i] = i;
        }
        return new QueryOutcome(false, found, NO_LEASE, positions);
    }
}
