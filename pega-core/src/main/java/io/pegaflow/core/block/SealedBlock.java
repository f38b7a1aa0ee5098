package io.pegaflow.core.block;

import io.pegaflow.core.memory.RefCount;
import java.lang.invoke.MethodHandles;
import org.jspecify.annotations.Nullable;

/**
 * A complete block: one {@link SlotData} for every slot ({@code num_layers × tp_size}), immutable once sealed.
 *
 * <p>Reference counted. The sealing worker creates it with one reference, which it hands to the RAM cache. Every other
 * holder (a query lease, a queued load, a prefetch result, an SSD write, a transfer lock) takes its own reference with
 * {@link #retain()} or {@link #tryRetain()} and gives it back with {@link #release()}. The last release returns every
 * slot's pinned memory. Thread-safe.
 *
 * <p>The count is a plain field behind the shared {@link RefCount} rather than an {@code AtomicInteger}: one object
 * and one pointer chase less per block, on the paths that touch every block of a query or save.
 */
public final class SealedBlock {
    private static final RefCount REFS = RefCount.of(MethodHandles.lookup(), SealedBlock.class, "refs", "block");

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
    public @Nullable SlotData slot(int index) {
        return index >= 0 && index < slots.length ? slots[index] : null;
    }

    public long footprintBytes() {
        return footprintBytes;
    }

    public int refCount() {
        return REFS.get(this);
    }

    /**
     * Adds a holder. The caller must already hold a reference (or own the block through a structure that does).
     *
     * @throws IllegalStateException when the block was already freed
     */
    public void retain() {
        REFS.retain(this);
    }

    /** Adds a holder unless the block was already freed: the weak-reference upgrade used by background tiers. */
    public boolean tryRetain() {
        return REFS.tryRetain(this);
    }

    /**
     * Drops a holder; the last one frees every slot's memory exactly once.
     *
     * @throws IllegalStateException when the block has no holders left
     */
    public void release() {
        if (REFS.release(this)) {
            for (SlotData slot : slots) {
                slot.release();
            }
        }
    }
}
