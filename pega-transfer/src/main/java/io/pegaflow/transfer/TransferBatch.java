package io.pegaflow.transfer;

import io.pegaflow.kernel.plan.MergeRule;
import io.pegaflow.kernel.plan.RangePlan;

/**
 * One batch of one-sided operations to one peer, all in the same {@link Direction}: a {@link RangePlan} read as
 * (local, remote, length) triples, so the transfer engine, the device copiers and the push engine share one coalescing
 * rule. A get copies from the peer (the plan's source) into local memory (its destination), a put the other way.
 *
 * <p>The engine spreads the operations over the peer's connections one by one, so an operation is the unit of
 * parallelism and of failure reporting. By default ranges are kept as added ({@link MergeRule#NEVER}); a caller that
 * adds many small contiguous ranges (the segments of consecutive blocks) passes {@link MergeRule#upTo(long)} to cap
 * each operation instead.
 *
 * <p>Not thread-safe; built by one thread and not modified after {@link TransferEngine#submit} until its future
 * completes.
 */
public final class TransferBatch {
    private final Direction direction;
    private final RangePlan plan;

    private TransferBatch(Direction direction, int expectedOps, MergeRule rule) {
        this.direction = direction;
        this.plan = new RangePlan(expectedOps, rule);
    }

    /** An empty batch of reads from the peer into local memory, every range its own operation. */
    public static TransferBatch get(int expectedOps) {
        return new TransferBatch(Direction.GET, expectedOps, MergeRule.NEVER);
    }

    /** An empty batch of reads whose contiguous ranges merge within {@code rule}. */
    public static TransferBatch get(int expectedOps, MergeRule rule) {
        return new TransferBatch(Direction.GET, expectedOps, rule);
    }

    /** An empty batch of writes from local memory into the peer, every range its own operation. */
    public static TransferBatch put(int expectedOps) {
        return new TransferBatch(Direction.PUT, expectedOps, MergeRule.NEVER);
    }

    /** An empty batch of writes whose contiguous ranges merge within {@code rule}. */
    public static TransferBatch put(int expectedOps, MergeRule rule) {
        return new TransferBatch(Direction.PUT, expectedOps, rule);
    }

    /**
     * Adds one range. Addresses are checked against the registered regions when the batch is submitted.
     *
     * @throws IllegalArgumentException when {@code lengthBytes <= 0} (a plan would drop it silently)
     * @return this batch
     */
    public TransferBatch add(long localAddress, long remoteAddress, long lengthBytes) {
        if (lengthBytes <= 0) {
            throw new IllegalArgumentException(
                    "operation " + plan.size() + " has length " + lengthBytes + ", must be > 0");
        }
        if (direction == Direction.GET) {
            plan.add(remoteAddress, localAddress, lengthBytes);
        } else {
            plan.add(localAddress, remoteAddress, lengthBytes);
        }
        return this;
    }

    public Direction direction() {
        return direction;
    }

    /** Number of operations (after merging). */
    public int size() {
        return plan.size();
    }

    public boolean isEmpty() {
        return plan.isEmpty();
    }

    public long localAddress(int op) {
        return direction == Direction.GET ? plan.dstAddress(op) : plan.srcAddress(op);
    }

    public long remoteAddress(int op) {
        return direction == Direction.GET ? plan.srcAddress(op) : plan.dstAddress(op);
    }

    public long lengthBytes(int op) {
        return plan.lengthBytes(op);
    }

    /** Sum of all lengths. */
    public long totalBytes() {
        return plan.totalBytes();
    }
}
