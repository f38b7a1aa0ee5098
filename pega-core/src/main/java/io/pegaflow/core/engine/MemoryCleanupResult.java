package io.pegaflow.core.engine;

/**
 * Result of draining the RAM index: entries removed, their footprint, pinned bytes actually freed now, and entries
 * another holder still kept alive.
 */
public record MemoryCleanupResult(
        long evictedBlocks, long evictedBytes, long reclaimedBytes, long stillReferencedBlocks) {}
