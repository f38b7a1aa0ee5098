package io.pegaflow.core.block;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A complete block: one {@link SlotData} for every slot ({@code num_layers × tp_size}), immutable once sealed.
 *
 * <p>Reference counted. The sealing worker creates it with one reference, which it hands to the RAM cache. Every other
 * holder (a query lease, a queued load, a prefetch result, an SSD write, a transfer lock) takes its own reference with
 * {@link #retain()} or {@link #tryRetain()} and gives it back with {@link #release()}. The last release returns every
 * slot's pinned memory. Thread-safe.
 */
public final class SealedBlock {
    private final SlotData[] slots;
    private final long footprintBytes;
    private final AtomicInteger refs = new AtomicInteger(1);

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
        return refs.get();
    }

    /** Adds a holder. The caller must already hold a reference (or own the block through a structure that does). */
    public void retain() {
        int prev = refs.getAndIncrement();
        if (prev <= 0) {
            refs.getAndDecrement();
            throw new IllegalStateException("retain of a released block");
        }
    }

    /** Adds a holder unless the block was already freed: the weak-reference upgrade used by background tiers. */
    public boolean tryRetain() {
        for (; ; ) {
            int current = refs.get();
            if (current <= 0) {
                return false;
            }
            if (refs.compareAndSet(current, current + 1)) {
                return true;
            }
        }
    }

    /** Drops a holder; the last one frees every slot's memory exactly once. */
    public void release() {
        int now = refs.decrementAndGet();
        if (now == 0) {
            for (SlotData slot : slots) {
                slot.release();
            }
        } else if (now < 0) {
            refs.incrementAndGet();
            throw new IllegalStateException("release of a block with no holders");
        }
    }
}
