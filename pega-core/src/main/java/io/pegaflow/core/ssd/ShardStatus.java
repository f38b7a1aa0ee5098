package io.pegaflow.core.ssd;

import org.jspecify.annotations.Nullable;

/**
 * A snapshot of one shard for the health endpoint and metrics.
 *
 * @param id shard index (order of {@code pega.ssd.paths})
 * @param path the shard file
 * @param healthy false once an I/O fault took the shard out of service
 * @param failureKind why, when not healthy; null otherwise
 * @param failureDetail the failing call and errno, when not healthy
 * @param usedBytes bytes of the entries the index serves from this shard (headers included)
 * @param capacityBytes ring bytes (the file is this plus the 4 KiB superblock)
 * @param entries entries the index serves from this shard
 * @param bytesWritten bytes written since start
 * @param bytesRead payload bytes read since start
 */
public record ShardStatus(
        int id,
        String path,
        boolean healthy,
        @Nullable SsdErrorKind failureKind,
        @Nullable String failureDetail,
        long usedBytes,
        long capacityBytes,
        long entries,
        long bytesWritten,
        long bytesRead) {}
