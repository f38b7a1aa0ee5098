package io.pegaflow.core.block;

import io.pegaflow.core.memory.PinnedAllocation;
import org.jspecify.annotations.Nullable;

/**
 * The stored bytes of one slot (one layer × TP rank) of one block: one contiguous segment, or a K and a V segment when
 * the layer uses the split layout.
 *
 * <pre>
 *   contiguous:  [ segment 0 : G·B' bytes ]                       (G·B real bytes, padding never copied)
 *   split:       [ segment 0 : K plane, B' ] [ segment 1 : V plane, B' ]   (usually in two different allocations)
 * </pre>
 *
 * <p>Ownership: a {@code SlotData} holds one reference on each allocation it points into and gives them back exactly
 * once through {@link #release()}, which its owning {@link SealedBlock} (or the sealing worker, for a duplicate
 * slot) calls. Many slots share one batch allocation, so memory returns to the pool only when the last sibling goes.
 */
public final class SlotData {
    private final PinnedAllocation allocation0;
    private final long address0;
    private final long length0;
    /** The second segment's allocation (a split K/V layer); null for a contiguous slot. */
    private final @Nullable PinnedAllocation allocation1;

    private final long address1;
    private final long length1;

    private SlotData(
            PinnedAllocation allocation0,
            long address0,
            long length0,
            @Nullable PinnedAllocation allocation1,
            long address1,
            long length1) {
        this.allocation0 = allocation0;
        this.address0 = address0;
        this.length0 = length0;
        this.allocation1 = allocation1;
        this.address1 = address1;
        this.length1 = length1;
    }

    /** One contiguous segment; takes one new reference on {@code allocation}. */
    public static SlotData contiguous(PinnedAllocation allocation, long address, long lengthBytes) {
        allocation.retain();
        return new SlotData(allocation, address, lengthBytes, null, 0, 0);
    }

    /** A K and a V segment; takes one new reference on each allocation. */
    public static SlotData split(
            PinnedAllocation kAllocation, long kAddress, PinnedAllocation vAllocation, long vAddress, long segBytes) {
        kAllocation.retain();
        vAllocation.retain();
        return new SlotData(kAllocation, kAddress, segBytes, vAllocation, vAddress, segBytes);
    }

    public int segments() {
        return allocation1 == null ? 1 : 2;
    }

    public long address(int segment) {
        return segment == 0 ? address0 : address1;
    }

    public long length(int segment) {
        return segment == 0 ? length0 : length1;
    }

    /** Host bytes this slot occupies, padding included. */
    public long footprintBytes() {
        return length0 + length1;
    }

    /** Gives back this slot's allocation references. Called exactly once by the slot's owner. */
    public void release() {
        allocation0.release();
        if (allocation1 != null) {
            allocation1.release();
        }
    }
}
