package io.pegaflow.core.ssd;

import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.memory.PinnedAllocation;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The shape of a block's payload on disk: for every slot in order, one segment or a K and a V segment of equal
 * length, stored back to back. Run-length encoded, because every slot of a model usually has the same shape:
 * {@code (slots, segments, segmentBytes)} triples.
 *
 * <pre>
 *   payload: [slot 0 seg 0][slot 0 seg 1?][slot 1 seg 0]...   each segment a multiple of 512 bytes
 * </pre>
 *
 * Immutable and thread-safe.
 */
final class SlotLayout {
    private final int[] runSlots;
    private final byte[] runSegments;
    private final long[] runSegmentBytes;
    private final int slotCount;
    private final long payloadBytes;

    SlotLayout(int[] runSlots, byte[] runSegments, long[] runSegmentBytes) {
        this.runSlots = runSlots;
        this.runSegments = runSegments;
        this.runSegmentBytes = runSegmentBytes;
        int slots = 0;
        long bytes = 0;
        for (int r = 0; r < runSlots.length; r++) {
            slots += runSlots[r];
            bytes += runSlots[r] * runSegments[r] * runSegmentBytes[r];
        }
        this.slotCount = slots;
        this.payloadBytes = bytes;
    }

    /**
     * The layout of a sealed block, or null when it cannot go to disk with direct I/O: a segment address or length
     * that is not a multiple of 512, or a split slot whose two segments differ in length.
     */
    static @Nullable SlotLayout of(SealedBlock block) {
        int n = block.slotCount();
        int[] slots = new int[4];
        byte[] segs = new byte[4];
        long[] lens = new long[4];
        int runs = 0;
        for (int i = 0; i < n; i++) {
            SlotData slot = java.util.Objects.requireNonNull(block.slot(i), "i < slotCount");
            int segments = slot.segments();
            long length = slot.length(0);
            for (int s = 0; s < segments; s++) {
                if (slot.length(s) != length
                        || !ShardLayoutDescriptor.isAligned(slot.length(s))
                        || !ShardLayoutDescriptor.isAligned(slot.address(s))) {
                    return null;
                }
            }
            if (runs > 0 && segs[runs - 1] == segments && lens[runs - 1] == length) {
                slots[runs - 1]++;
                continue;
            }
            if (runs == slots.length) {
                slots = Arrays.copyOf(slots, runs * 2);
                segs = Arrays.copyOf(segs, runs * 2);
                lens = Arrays.copyOf(lens, runs * 2);
            }
            slots[runs] = 1;
            segs[runs] = (byte) segments;
            lens[runs] = length;
            runs++;
        }
        return new SlotLayout(Arrays.copyOf(slots, runs), Arrays.copyOf(segs, runs), Arrays.copyOf(lens, runs));
    }

    int runCount() {
        return runSlots.length;
    }

    int runSlots(int run) {
        return runSlots[run];
    }

    int runSegments(int run) {
        return runSegments[run];
    }

    long runSegmentBytes(int run) {
        return runSegmentBytes[run];
    }

    int slotCount() {
        return slotCount;
    }

    long payloadBytes() {
        return payloadBytes;
    }

    /** Whether every run is well formed (decoded headers are checked with this). */
    boolean isValid() {
        for (int r = 0; r < runSlots.length; r++) {
            if (runSlots[r] <= 0
                    || (runSegments[r] != 1 && runSegments[r] != 2)
                    || runSegmentBytes[r] < 0
                    || !ShardLayoutDescriptor.isAligned(runSegmentBytes[r])) {
                return false;
            }
        }
        return slotCount > 0;
    }

    /**
     * Builds a block over {@code allocation}, which holds the payload exactly as it was written. The slots take their
     * own references; the caller keeps (and later releases) its reference on the allocation.
     */
    SealedBlock rebuild(PinnedAllocation allocation) {
        SlotData[] slots = new SlotData[slotCount];
        long address = allocation.address();
        int s = 0;
        for (int r = 0; r < runSlots.length; r++) {
            long seg = runSegmentBytes[r];
            for (int i = 0; i < runSlots[r]; i++) {
                if (runSegments[r] == 1) {
                    slots[s++] = SlotData.contiguous(allocation, address, seg);
                    address += seg;
                } else {
                    slots[s++] = SlotData.split(allocation, address, allocation, address + seg, seg);
                    address += 2 * seg;
                }
            }
        }
        return new SealedBlock(slots);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SlotLayout other
                && Arrays.equals(runSlots, other.runSlots)
                && Arrays.equals(runSegments, other.runSegments)
                && Arrays.equals(runSegmentBytes, other.runSegmentBytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(runSlots) * 31 + Arrays.hashCode(runSegmentBytes);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("SlotLayout[");
        for (int r = 0; r < runSlots.length; r++) {
            sb.append(r == 0 ? "" : ", ")
                    .append(runSlots[r])
                    .append('x')
                    .append(runSegments[r])
                    .append('x')
                    .append(runSegmentBytes[r]);
        }
        return sb.append(']').toString();
    }
}
