package io.pegaflow.core.device.cuda;

/**
 * How one batched plan's ranges are shared out among its submitting threads: {@code parts} contiguous slices of the
 * descriptor arrays, as equal in range count as whole calls allow, each issued on its own stream as calls of at most
 * {@code maxRanges}. Range count, not bytes, is what is balanced: below about 64 KiB the batch is bound by the
 * driver's host time per descriptor, and the copy engines serve every stream from one link anyway. Stateless.
 *
 * <p>Slices start on a call boundary of the whole plan ({@code c·maxRanges}), so the calls are the ones a single
 * submitter would make, and the failing call's index means the same with one thread or several.
 */
final class BatchSplit {
    private BatchSplit() {}

    /**
     * Submitters a plan of {@code ranges} gets: {@code wanted} at most, and never so many that a slice has no whole
     * call ({@code ranges / maxRanges} full calls are needed for {@code parts} of them).
     */
    static int parts(int ranges, int maxRanges, int wanted) {
        int fullCalls = ranges / maxRanges;
        return Math.max(1, Math.min(wanted, fullCalls));
    }

    /** First call of slice {@code s} of {@code parts}, for a plan of {@code calls} calls. */
    static int firstCall(int s, int parts, int calls) {
        return (int) ((long) calls * s / parts);
    }

    /** First range of slice {@code s} (the end of slice {@code s - 1}); {@code s == parts} gives {@code ranges}. */
    static int firstRange(int s, int parts, int ranges, int maxRanges) {
        if (s >= parts) {
            return ranges;
        }
        return firstCall(s, parts, BatchDescriptors.calls(ranges, maxRanges)) * maxRanges;
    }
}
