package io.pegaflow.core.block;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A complete block: one {@link SlotData} for every slot ({@code num_layers × tp_size}), immutable once sealed.
 *
 * <p>Reference counted. The sealing worker creates it with one reference, which it hands to the RAM cache. Every other
 * holder (a query lease, a queued load, a prefetch result, an SSD write, a transfer lock) takes its own reference with
 * {@link #retain()} or {@link #tryRetain()} and gives it back with {@link #release()}. The last release returns every
 * slot's pinned memory. Thread-safe.
 *
 * <p>The count is a plain field behind a {@link VarHandle} rather than an {@code AtomicInteger}: one object and one
 * pointer chase less per block, on the paths that touch every block of a query or save.
 */
public final class SealedBlock {
    private static final VarHandle REFS;

    static {
        try {
            REFS = MethodHandles.lookup().findVarHandle(SealedBlock.class, "refs", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SlotData[] slots;
    private final long footprintBytes;

    @SuppressWarnings("unused") // accessed through REFS
    private volatile int refs = 1;

    /** Takes ownership of {@code slots}; every element must be non-null. */
    public SealedBlock(SlotData[] slots) {
        long footprint = 0;
        for (SlotData slot : slots) {
            footprint += slot.footprintBytes();
        }
        this.slots = slots;
        this.footprintBytes = footprint;
    }

    public int slotCount() {
        return slots.length;
    }

    /** The slot's data, or null when {@code index} is outside this block (a different topology saved it). */
    public SlotData slot(int index) {
        return index >= 0 && index < slots.length ? slots[index] : null;
    }

    public long footprintBytes() {
        return footprintBytes;
    }

    public int refCount() {
        return refs;
    }

    /**
     * Adds a holder. The caller must already hold a reference (or own the block through a structure that does).
     *
     * <p>A compare-and-set, not an add-then-undo: the undo would leave a transient count of 1 on a freed block, and a
     * concurrent {@link #tryRetain()} could take it (jcstress {@code SealedBlockStrayRetainVsTryRetain}).
     *
     * @throws IllegalStateException when the block was already freed
     */
    public void retain() {
        if (!tryRetain()) {
            throw new IllegalStateException("retain of a released block");
        }
    }

    /** Adds a holder unless the block was already freed: the weak-reference upgrade used by background tiers. */
    public boolean tryRetain() {
        for (; ; ) {
            int current = refs;
            if (current <= 0) {
                return false;
            }
            if (REFS.compareAndSet(this, current, current + 1)) {
                return true;
            }
        }
    }

    /** Drops a holder; the last one frees every slot's memory exactly once. */
    public void release() {
        int now = (int) REFS.getAndAdd(this, -1) - 1;
        if (now == 0) {
            for (SlotData slot : slots) {
                slot.release();
            }
        } else if (now < 0) {
            REFS.getAndAdd(this, 1);
            throw new IllegalStateException("release of a block with no holders");
        }
    }
}
