package io.pegaflow.core.device.cuda;

import io.pegaflow.kernel.plan.RangePlan;
import io.pegaflow.sys.OffHeap;
import io.pegaflow.sys.cuda.CudaBatchCopy;

/**
 * The native arrays one {@code cuMemcpyBatchAsync} call reads, for a whole plan at once, and the calls it is split
 * into.
 *
 * <pre>
 *   base + 0          CUmemcpyAttributes (24 B): source order STREAM, flags
 *   base + 24         attrsIdxs[1] = {0}
 *   base + 32         dsts[n]     then srcs[n], then sizes[n]       (8 B each)
 *   call c            ranges [c·maxRanges, min(n, (c+1)·maxRanges)): the three arrays at that offset, one attribute
 * </pre>
 *
 * Writing the whole plan first costs three stores per range and lets the lane issue the calls back to back, so the
 * copy engines start on the first call while the driver takes the next. Stateless.
 */
final class BatchDescriptors {
    static final int HEADER_BYTES = 32;
    static final int BYTES_PER_RANGE = 24;

    private BatchDescriptors() {}

    /** Native bytes a plan of {@code ranges} needs. */
    static long bytesFor(long ranges) {
        return HEADER_BYTES + ranges * BYTES_PER_RANGE;
    }

    /** Number of calls for {@code ranges} at {@code maxRanges} per call (0 for none). */
    static int calls(int ranges, int maxRanges) {
        return (ranges + maxRanges - 1) / maxRanges;
    }

    /** First range of call {@code c}. */
    static int callStart(int c, int maxRanges) {
        return c * maxRanges;
    }

    /** Ranges in call {@code c}. */
    static int callLength(int c, int ranges, int maxRanges) {
        return Math.min(maxRanges, ranges - c * maxRanges);
    }

    static long dsts(long base) {
        return base + HEADER_BYTES;
    }

    static long srcs(long base, int ranges) {
        return base + HEADER_BYTES + 8L * ranges;
    }

    static long sizes(long base, int ranges) {
        return base + HEADER_BYTES + 16L * ranges;
    }

    static long attributes(long base) {
        return base;
    }

    static long attributeIndices(long base) {
        return base + 24;
    }

    /** Writes the header and the plan's three arrays at {@code base} ({@link #bytesFor} writable bytes). */
    static void write(RangePlan plan, int flags, long base) {
        int n = plan.size();
        CudaBatchCopy.writeAttributes(attributes(base), CudaBatchCopy.SRC_ACCESS_ORDER_STREAM, flags);
        // OFF-HEAP: the caller sized [base, base + bytesFor(n)) for exactly these writes.
        OffHeap.putLong(attributeIndices(base), 0L);
        long dst = dsts(base);
        long src = srcs(base, n);
        long size = sizes(base, n);
        for (int i = 0; i < n; i++) {
            OffHeap.putLong(dst + 8L * i, plan.dstAddress(i));
            OffHeap.putLong(src + 8L * i, plan.srcAddress(i));
            OffHeap.putLong(size + 8L * i, plan.lengthBytes(i));
        }
    }
}
