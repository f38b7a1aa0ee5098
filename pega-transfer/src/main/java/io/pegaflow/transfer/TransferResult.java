package io.pegaflow.transfer;

import java.util.BitSet;
import org.jspecify.annotations.Nullable;

/**
 * The outcome of one batch, delivered only once no operation of it can still touch local or remote memory: after every
 * connection it used either completed its operations or was closed. The caller may then reuse or free the memory.
 *
 * <p>Operations fail per connection: when a connection fails, every operation the batch put on it is reported failed,
 * whether or not its bytes happened to land. Operations on the other connections are unaffected, so a caller can use
 * the longest prefix of operations that completed ({@link #completedPrefix()}).
 */
public final class TransferResult {
    private final Direction direction;
    private final int ops;
    private final long bytesTransferred;
    private final BitSet failedOps;
    private final @Nullable TransferException failure;

    /**
     * @param failedOps the indices of the failed operations; copied
     * @param failure the first failure, or null when every operation completed
     */
    public TransferResult(
            Direction direction,
            int ops,
            long bytesTransferred,
            BitSet failedOps,
            @Nullable TransferException failure) {
        this.direction = direction;
        this.ops = ops;
        this.bytesTransferred = bytesTransferred;
        this.failedOps = (BitSet) failedOps.clone();
        this.failure = failure;
        if ((failure == null) != failedOps.isEmpty()) {
            throw new IllegalArgumentException("failed operations and failure must come together");
        }
    }

    public Direction direction() {
        return direction;
    }

    /** Operations in the batch. */
    public int ops() {
        return ops;
    }

    /** Bytes of the operations that completed. */
    public long bytesTransferred() {
        return bytesTransferred;
    }

    /** Whether every operation completed. */
    public boolean isComplete() {
        return failure == null;
    }

    /** Whether operation {@code op} failed. */
    public boolean failed(int op) {
        return failedOps.get(op);
    }

    /** How many operations failed. */
    public int failedCount() {
        return failedOps.cardinality();
    }

    /** The number of leading operations that all completed: {@link #ops()} when the batch is complete. */
    public int completedPrefix() {
        int first = failedOps.nextSetBit(0);
        return first < 0 ? ops : first;
    }

    /** The first failure, or null when the batch is complete. */
    public @Nullable TransferException failure() {
        return failure;
    }

    @Override
    public String toString() {
        return direction + " of " + ops + " ops: " + bytesTransferred + " bytes"
                + (failure == null ? "" : ", " + failedCount() + " failed (" + failure.getMessage() + ")");
    }
}
