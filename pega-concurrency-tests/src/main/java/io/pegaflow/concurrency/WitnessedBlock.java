package io.pegaflow.concurrency;

import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.memory.PinnedAllocation;

/**
 * A one-slot {@link SealedBlock} over its own pool allocation, plus one extra "witness" reference on that allocation.
 *
 * <p>The witness keeps the allocation's count from reaching 0 when the block frees its slot, so the count tells how
 * often the block gave its memory back: 2 while the block is alive, 1 after one free, 0 after a double free. A plain
 * pool counter could not say which block freed what; this works on a pool shared by thousands of states.
 */
public final class WitnessedBlock {
    private final PinnedAllocation allocation;
    private final SealedBlock block;

    /** A block with one reference, owned by the caller (it stands for the RAM cache's reference). */
    public WitnessedBlock() {
        allocation = Pools.allocateShared();
        block = new SealedBlock(
                new SlotData[] {SlotData.contiguous(allocation, allocation.address(), Pools.UNIT_BYTES)});
    }

    public SealedBlock block() {
        return block;
    }

    /** How often the block has freed its slot's memory so far: 0 while alive, 1 once freed, 2 for a double free. */
    public int frees() {
        return 2 - allocation.refCount();
    }

    /**
     * Drops every block reference still counted and then the witness, returning the unit to the shared pool. Runs after
     * the outcome is recorded; a broken state (double free, resurrected block) is cleaned up as far as it can be.
     */
    public void dispose() {
        try {
            while (block.refCount() > 0) {
                block.release();
            }
            if (allocation.refCount() > 0) {
                allocation.release();
            }
        } catch (IllegalStateException alreadyBroken) {
            // the outcome already shows the fault; the unit may stay lost in this VM's shared pool
        }
    }
}
