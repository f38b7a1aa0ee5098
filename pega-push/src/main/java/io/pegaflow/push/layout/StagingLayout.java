package io.pegaflow.push.layout;

/**
 * Where a request's blocks sit in a server's pool staging, the same on both sides of a push so that one layer of one
 * rank is one contiguous range on each side:
 *
 * <pre>
 *   staging = [layer 0][layer 1]...[layer L-1]
 *   layer l = [block position 0: segment 0 (K), segment 1 (V, split layouts only)][position 1] ...
 *   address(l, p, s) = base + layerOffset(l) + (p * segments(l) + s) * segmentBytes(l)
 * </pre>
 *
 * Block positions, not block ids: prefill block {@code i} of the request goes to decode block {@code i}, so neither
 * side needs the other's block table. Immutable.
 */
public final class StagingLayout {
    private final int blocks;
    private final long[] segmentBytes;
    private final int[] segments;
    private final long[] layerOffset;
    private final long totalBytes;

    public StagingLayout(int blocks, long[] segmentBytes, int[] segments) {
        if (segmentBytes.length != segments.length) {
            throw new IllegalArgumentException("one segment size and count per layer");
        }
        this.blocks = blocks;
        this.segmentBytes = segmentBytes.clone();
        this.segments = segments.clone();
        this.layerOffset = new long[segments.length];
        long at = 0;
        for (int l = 0; l < segments.length; l++) {
            layerOffset[l] = at;
            at = Math.addExact(at, Math.multiplyExact((long) blocks * segments[l], segmentBytes[l]));
        }
        this.totalBytes = at;
    }

    /** The layout of a rank's registered layers for {@code blocks} block positions. */
    public static StagingLayout of(RankLayers rank, int blocks) {
        int n = rank.layerCount();
        long[] bytes = new long[n];
        int[] segs = new int[n];
        for (int l = 0; l < n; l++) {
            bytes[l] = rank.segmentBytes(l);
            segs[l] = rank.segments(l);
        }
        return new StagingLayout(blocks, bytes, segs);
    }

    public int blocks() {
        return blocks;
    }

    public int layers() {
        return segments.length;
    }

    public int segments(int l) {
        return segments[l];
    }

    public long segmentBytes(int l) {
        return segmentBytes[l];
    }

    public long layerOffset(int l) {
        return layerOffset[l];
    }

    public long layerBytes(int l) {
        return (long) blocks * segments[l] * segmentBytes[l];
    }

    public long offset(int l, int position, int segment) {
        return layerOffset[l] + ((long) position * segments[l] + segment) * segmentBytes[l];
    }

    public long totalBytes() {
        return totalBytes;
    }
}
