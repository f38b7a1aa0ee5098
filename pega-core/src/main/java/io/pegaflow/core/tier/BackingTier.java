package io.pegaflow.core.tier;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A slower tier that can re-materialise blocks missing from RAM (the SSD store; later a remote node). The query path
 * starts a fetch for a RAM-miss suffix and answers Loading until it completes.
 *
 * <p>Ownership: the engine that was launched with a tier owns it and closes it, after the sealing worker stopped and
 * before the pool unmaps, in reverse order of the tier list.
 */
public interface BackingTier extends AutoCloseable {

    /** Label used in tier attribution metrics ({@code ssd}, {@code rdma}); unique within one engine. */
    String tierName();

    /**
     * Host segment alignment this tier's transfers need (512 for {@code O_DIRECT}); the engine pads every saved
     * segment to at least this. A power of two.
     */
    default long requiredHostAlignmentBytes() {
        return 1;
    }

    /**
     * Fetches a prefix of {@code keys} into memory from {@code memory}: the result lists blocks in key order and may
     * stop early (the first key this tier cannot supply ends it). Every returned block carries one reference that
     * passes to the caller. The future must always complete (with an empty list on failure), never exceptionally.
     */
    CompletableFuture<List<SealedBlock>> fetchPrefix(List<BlockKey> keys, ReclaimingAllocator memory);

    /**
     * Whether this tier fetches from peers that may come to hold a key later (a remote node still saving it), so an
     * all-or-nothing fetch asks it again while it waits ({@link TierChain#fetchWhole}). A local tier's answer does not
     * change by waiting.
     */
    default boolean waitsForPeers() {
        return false;
    }

    /** Stops the tier's work in progress and frees what it holds. Idempotent. */
    @Override
    default void close() {}
}
