package io.pegaflow.kernel.plan;

/**
 * When {@link RangePlan#add} may extend the previous range instead of adding one: the new range must continue the
 * previous one on both sides (source and destination), and the merged length must stay within
 * {@link #maxRangeBytes()}.
 *
 * <p>The device copiers take {@link #CONTIGUOUS} (one memcpy or one DMA call per run, however long). A transport
 * whose operations have a size limit (an RDMA message, a registered-region window) takes {@link #upTo(long)}. Tests
 * and copiers that want every range as given take {@link #NEVER}.
 *
 * @param maxRangeBytes the longest range a merge may produce; 0 never merges
 */
public record MergeRule(long maxRangeBytes) {
    /** Merge every contiguous run, whatever its length. */
    public static final MergeRule CONTIGUOUS = new MergeRule(Long.MAX_VALUE);

    /** Keep every added range on its own. */
    public static final MergeRule NEVER = new MergeRule(0);

    public MergeRule {
        if (maxRangeBytes < 0) {
            throw new IllegalArgumentException("merge limit: " + maxRangeBytes + " bytes (expected: >= 0)");
        }
    }

    /** Merge contiguous runs while the merged range stays at most {@code maxRangeBytes} long. */
    public static MergeRule upTo(long maxRangeBytes) {
        return new MergeRule(maxRangeBytes);
    }

    /** Whether a range of {@code nextBytes} may extend a previous range of {@code previousBytes}. */
    boolean allowsMerge(long previousBytes, long nextBytes) {
        return previousBytes <= maxRangeBytes - nextBytes; // no overflow: both are positive
    }
}
