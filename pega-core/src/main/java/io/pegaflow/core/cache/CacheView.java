package io.pegaflow.core.cache;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import java.util.List;
import java.util.function.BiConsumer;

/** What the RAM cache shows to those who only read it (metrics, the dashboard, tests): what it holds. */
public interface CacheView {
    /** Blocks indexed now. */
    int size();

    /** Pool bytes the indexed blocks hold. */
    long residentBytes();

    /**
     * Hands each indexed block among {@code keys} to {@code sink}, referenced: the sink owns that reference and
     * releases it once. Absent keys are skipped.
     */
    void lookupEach(List<BlockKey> keys, BiConsumer<BlockKey, SealedBlock> sink);

    /** Marks which of {@code keys} are resident, under one lock acquisition; membership only (no use recorded). */
    void markResident(List<BlockKey> keys, boolean[] resident);
}
