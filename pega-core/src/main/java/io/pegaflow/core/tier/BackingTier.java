package io.pegaflow.core.tier;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A slower tier that can re-materialise blocks missing from RAM (the SSD store; later a remote node). The query path
 * starts a fetch for a RAM-miss suffix and answers Loading until it completes (spec/storage.md §5).
 */
public interface BackingTier {

    /** Label used in tier attribution metrics ({@code ssd}, {@code rdma}). */
    String tierName();

    /**
     * Fetches a prefix of {@code keys}: the result lists blocks in key order and may stop early (the first key this
     * tier cannot supply ends it). Every returned block carries one reference that passes to the caller. The future
     * must always complete (with an empty list on failure), never exceptionally.
     */
    CompletableFuture<List<SealedBlock>> fetchPrefix(List<BlockKey> keys);
}
