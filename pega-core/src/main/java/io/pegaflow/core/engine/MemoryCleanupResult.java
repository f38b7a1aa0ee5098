package io.pegaflow.core.engine;

/**
 * Result of draining the RAM index: entries removed, their footprint, pinned bytes actually freed now, entries another
 * holder (a lease, a copy in flight) still kept alive, and the transfer-lock sessions the cleanup broke first.
 */
public record MemoryCleanupResult(
        long evictedBlocks,
        long evictedBytes,
        long reclaimedBytes,
        long stillReferencedBlocks,
        long brokenTransferLocks) {}
