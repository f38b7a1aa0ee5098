package io.pegaflow.transfer;

import java.util.Arrays;

/**
 * One batch of one-sided operations to one peer: (local address, remote address, length) triples, all in the same
 * {@link Direction}. The engine spreads the operations over the peer's connections one by one, so an operation is the
 * unit of parallelism and of failure reporting; ranges are kept as added, never merged.
 *
 * <p>Struct-of-arrays over primitive {@code long[]}: a 1024-operation batch allocates three arrays, not 1024 objects.
 * Not thread-safe; built by one thread and not modified after {@link TransferEngine#submit} until its future completes.
 */
public final class TransferBatch {
    private final Direction direction;
    private long[] local;
    private long[] remote;
    private long[] length;
    private int count;
    private long totalBytes;

    private TransferBatch(Direction direction, int expectedOps) {
        this.direction = direction;
        int capacity = Math.max(4, expectedOps);
        local = new long[capacity];
        remote = new long[capacity];
        length = new long[capacity];
    }

    /** An empty batch of reads from the peer into local memory. */
    public static TransferBatch get(int expectedOps) {
        return new TransferBatch(Direction.GET, expectedOps);
    }

    /** An empty batch of writes from local memory into the peer. */
    public static TransferBatch put(int expectedOps) {
        return new TransferBatch(Direction.PUT, expectedOps);
    }

    /**
     * Adds one operation. Addresses are checked against the registered regions when the batch is submitted.
     *
     * @throws IllegalArgumentException when {@code lengthBytes <= 0}
     * @return this batch
     */
    public TransferBatch add(long localAddress, long remoteAddress, long lengthBytes) {
        if (lengthBytes <= 0) {
            throw new IllegalArgumentException("operation " + count + " has length " + lengthBytes + ", must be > 0");
        }
        if (count == local.length) {
            int capacity = count * 2;
            local = Arrays.copyOf(local, capacity);
            remote = Arrays.copyOf(remote, capacity);
            length = Arrays.copyOf(length, capacity);
        }
        local[count] = localAddress;
        remote[count] = remoteAddress;
        length[count] = lengthBytes;
        count++;
        totalBytes += lengthBytes;
        return this;
    }

    public Direction direction() {
        return direction;
    }

    /** Number of operations. */
    public int size() {
        return count;
    }

    public boolean isEmpty() {
        return count == 0;
    }

    public long localAddress(int op) {
        return local[op];
    }

    public long remoteAddress(int op) {
        return remote[op];
    }

    public long lengthBytes(int op) {
        return length[op];
    }

    /** Sum of all lengths. */
    public long totalBytes() {
        return totalBytes;
    }
}
