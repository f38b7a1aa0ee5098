package io.pegaflow.core.cache;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import java.util.ArrayList;
import java.util.List;

/**
 * Entries taken out of the index by one eviction step. The cache's references move into this object; the caller must
 * {@link #releaseAll()} them after telling listeners, outside the cache lock.
 */
public final class EvictedBlocks {
    private final List<BlockKey> keys = new ArrayList<>();
    private final List<SealedBlock> blocks = new ArrayList<>();
    private long footprintBytes;
    private int stillReferenced;

    void add(BlockKey key, SealedBlock block) {
        keys.add(key);
        blocks.add(block);
        footprintBytes += block.footprintBytes();
        if (block.refCount() > 1) {
            stillReferenced++;
        }
    }

    public List<BlockKey> keys() {
        return keys;
    }

    public int count() {
        return keys.size();
    }

    /** Sum of the removed blocks' footprints: residency removed from the index. */
    public long footprintBytes() {
        return footprintBytes;
    }

    /** Removed entries that another holder (a lease, a load) still referenced at removal. */
    public int stillReferenced() {
        return stillReferenced;
    }

    /** Drops the cache's references. Called once. */
    public void releaseAll() {
        for (SealedBlock block : blocks) {
            block.release();
        }
        blocks.clear();
    }
}
