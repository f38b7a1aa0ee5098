package io.pegaflow.core.engine;

/**
 * One lease of a grouped Load (pegaflow-llm 0.23.7 and later, upstream #421): for each load group, in the request's
 * group order, the destination block id of every leased block in lease order, or {@link #ABSENT} where that group has
 * no destination for the block. Block id 0 is a real destination.
 */
public record GroupedLeaseLoad(byte[] lease, int[][] targetsByGroup) {
    /** No destination in this group for this block: nothing is copied for it. */
    public static final int ABSENT = -1;
}
