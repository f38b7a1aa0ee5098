package io.pegaflow.kernel.plan;

import java.util.Arrays;

/**
 * A batch of (source address, destination address, length) copies, coalesced as they are added: a range that continues
 * the previous one on both sides extends it (within the {@link MergeRule}) instead of adding an entry (as in
 * novitalabs/pegaflow v0.22.4), so a run of consecutive blocks costs one memcpy, one DMA call or one RDMA operation.
 * The device copiers, the transfer engine and the push engine all build their batches with it, so the coalescing rule
 * exists once.
 *
 * <p>Direction is the builder's: Save builds device → pool ({@code src} on the device, {@code dst} in the pool),
 * Load builds pool → device. Addresses are raw virtual addresses; the plan never dereferences them. Whoever builds a
 * plan holds references to the memory on both sides until the copy that executes it has returned.
 *
 * <p>Struct-of-arrays over primitive {@code long[]}: a 32768-block plan allocates three arrays, not 32768 objects.
 * Not thread-safe; built by one thread and handed to the executing thread through a happens-before edge (a queue).
 */
public final class RangePlan {
    private final MergeRule rule;
    private long[] src;
    private long[] dst;
    private long[] length;
    private int count;
    private long totalBytes;
    private boolean fenced;

    /** A plan that merges every contiguous run ({@link MergeRule#CONTIGUOUS}). */
    public RangePlan(int expectedRanges) {
        this(expectedRanges, MergeRule.CONTIGUOUS);
    }

    /** @param expectedRanges initial capacity (the arrays grow as needed) */
    public RangePlan(int expectedRanges, MergeRule rule) {
        int capacity = Math.max(4, expectedRanges);
        this.rule = rule;
        this.src = new long[capacity];
        this.dst = new long[capacity];
        this.length = new long[capacity];
    }

    /** Adds one copy of {@code lengthBytes} from {@code srcAddress} to {@code dstAddress}; empty ranges are ignored. */
    public void add(long srcAddress, long dstAddress, long lengthBytes) {
        if (lengthBytes <= 0) {
            return;
        }
        totalBytes += lengthBytes;
        if (count > 0 && !fenced) {
            int last = count - 1;
            if (src[last] + length[last] == srcAddress
                    && dst[last] + length[last] == dstAddress
                    && rule.allowsMerge(length[last], lengthBytes)) {
                length[last] += lengthBytes;
                return;
            }
        }
        if (count == src.length) {
            int capacity = count * 2;
            src = Arrays.copyOf(src, capacity);
            dst = Arrays.copyOf(dst, capacity);
            length = Arrays.copyOf(length, capacity);
        }
        src[count] = srcAddress;
        dst[count] = dstAddress;
        length[count] = lengthBytes;
        count++;
        fenced = false;
    }

    /**
     * The next range starts an entry of its own even when it continues the last one. Builders fence where the memory
     * on either side changes allocation: two layer tensors can be mapped at adjacent addresses and still be separate
     * allocations, and one DMA call cannot span two (the driver answers {@code CUDA_ERROR_INVALID_VALUE}).
     */
    public void fence() {
        fenced = true;
    }

    /**
     * The same ranges copied the other way (each source becomes the destination). The merges stay valid: they only
     * depend on both sides being contiguous.
     */
    public RangePlan reversed() {
        RangePlan r = new RangePlan(count, rule);
        System.arraycopy(dst, 0, r.src, 0, count);
        System.arraycopy(src, 0, r.dst, 0, count);
        System.arraycopy(length, 0, r.length, 0, count);
        r.count = count;
        r.totalBytes = totalBytes;
        return r;
    }

    /** Number of ranges after merging. */
    public int size() {
        return count;
    }

    public long srcAddress(int i) {
        return src[i];
    }

    public long dstAddress(int i) {
        return dst[i];
    }

    public long lengthBytes(int i) {
        return length[i];
    }

    /** Sum of all added lengths. */
    public long totalBytes() {
        return totalBytes;
    }

    public boolean isEmpty() {
        return count == 0;
    }

    public MergeRule mergeRule() {
        return rule;
    }
}
