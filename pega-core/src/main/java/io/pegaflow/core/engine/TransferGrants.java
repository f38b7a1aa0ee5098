package io.pegaflow.core.engine;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.cache.BlockCache;
import io.pegaflow.core.lease.TransferLockTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * QueryBlocksForTransfer on the engine's side: what a peer asked for is looked up in the RAM index and locked under one
 * session of the {@link TransferLockTable}, and the grant describes each block's slots so the peer can read them with
 * one-sided gets. A lock over a share of the pool is refused with the property that sets that share, so the operator
 * knows which knob to turn.
 */
final class TransferGrants {
    private final BlockCache cache;
    private final TransferLockTable table;
    private final double requesterShare;
    private final double poolShare;

    TransferGrants(BlockCache cache, TransferLockTable table, double requesterShare, double poolShare) {
        this.cache = cache;
        this.table = table;
        this.requesterShare = requesterShare;
        this.poolShare = poolShare;
    }

    /** Locks the resident blocks among {@code hashes} (no prefix semantics, misses skipped) for {@code requesterId}. */
    TransferGrant lock(String namespace, List<byte[]> hashes, String requesterId) {
        List<BlockKey> keys = new ArrayList<>(hashes.size());
        for (byte[] h : hashes) {
            keys.add(new BlockKey(namespace, h));
        }
        List<SealedBlock> found = new ArrayList<>(keys.size());
        List<TransferGrant.Block> described = new ArrayList<>(keys.size());
        cache.lookupEach(keys, (key, block) -> {
            found.add(block);
            described.add(describe(key, block));
        });
        String session;
        try {
            session = table.lock(requesterId, found.toArray(new SealedBlock[0]));
        } catch (TransferLockTable.OverBound e) {
            throw e.perRequester()
                    ? EngineLimits.exhausted(e.reason(), "pega.rdma.transfer-lock-requester-share", requesterShare)
                    : EngineLimits.exhausted(e.reason(), "pega.rdma.transfer-lock-pool-share", poolShare);
        }
        return new TransferGrant(session, TimeUnit.NANOSECONDS.toSeconds(table.timeoutNanos()), described);
    }

    private static TransferGrant.Block describe(BlockKey key, SealedBlock block) {
        List<TransferGrant.Slot> slots = new ArrayList<>(block.slotCount());
        for (int i = 0; i < block.slotCount(); i++) {
            SlotData slot = Objects.requireNonNull(block.slot(i), "i < slotCount");
            slots.add(
                    slot.segments() == 1
                            ? new TransferGrant.Slot(slot.address(0), slot.length(0), 0, 0)
                            : new TransferGrant.Slot(slot.address(0), slot.length(0), slot.address(1), slot.length(1)));
        }
        return new TransferGrant.Block(key.hash(), slots);
    }
}
