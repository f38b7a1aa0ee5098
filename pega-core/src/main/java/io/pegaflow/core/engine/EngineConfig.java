package io.pegaflow.core.engine;

import io.pegaflow.core.memory.PoolConfig;
import java.time.Duration;

/**
 * Everything the engine needs to start, as plain values (the server maps its typed properties onto this; the core
 * never sees Spring).
 *
 * @param pool pinned pool shape
 * @param leaseTtl lifetime of a query lease from creation (reference: 600 s, not refreshed)
 * @param maintenanceInterval how often expired leases are swept and stale in-flight blocks collected (30 s)
 * @param inflightMaxAge age after which a block still missing slots is dropped (300 s)
 * @param evictionBatch blocks evicted per reclaim step when an allocation fails (64)
 * @param blockwiseAlloc one pool allocation per block instead of one per layer per Save
 * @param hostAlignmentBytes host segment padding, at least; the engine raises it to what its tiers need (512 with
 *     the SSD tier's O_DIRECT)
 * @param admission {@code lru}, {@code tinylfu} (LRU behind our admission sketch) or {@code caffeine} (Caffeine's
 *     W-TinyLFU as the RAM tier's policy)
 * @param saveDeadline the longest a Save waits for its device copy, and on a full pool for queued Saves to be
 *     sealed, before it fails with DEADLINE_EXCEEDED (30 s; ours, the reference waits forever)
 * @param headroomBytes pool bytes kept free by evicting the coldest blocks after each sealed Save, so the next Saves
 *     allocate without evicting on their request thread; 0: evict only when an allocation fails (the reference).
 *     Ours; less than the pool
 */
public record EngineConfig(
        PoolConfig pool,
        Duration leaseTtl,
        Duration maintenanceInterval,
        Duration inflightMaxAge,
        int evictionBatch,
        boolean blockwiseAlloc,
        long hostAlignmentBytes,
        String admission,
        Duration saveDeadline,
        long headroomBytes) {
    /** The default {@link #saveDeadline()}. */
    public static final Duration DEFAULT_SAVE_DEADLINE = Duration.ofSeconds(30);

    public EngineConfig {
        requirePositive("pega.lease.ttl", leaseTtl);
        requirePositive("pega.maintenance-interval", maintenanceInterval);
        requirePositive("pega.inflight-max-age", inflightMaxAge);
        requirePositive("pega.save-deadline", saveDeadline);
        if (evictionBatch < 1) {
            throw new IllegalArgumentException("pega.eviction-batch: " + evictionBatch + " (expected: >= 1)");
        }
        if (hostAlignmentBytes < 1 || Long.bitCount(hostAlignmentBytes) != 1) {
            throw new IllegalArgumentException(
                    "host alignment: " + hostAlignmentBytes + " (expected: a power of two >= 1)");
        }
        if (!"lru".equals(admission) && !"tinylfu".equals(admission) && !"caffeine".equals(admission)) {
            throw new IllegalArgumentException(
                    "pega.cache.admission: " + admission + " (expected: lru, tinylfu or caffeine)");
        }
        if (headroomBytes < 0 || headroomBytes >= pool.capacityBytes()) {
            throw new IllegalArgumentException("pega.pool.headroom: " + headroomBytes + " bytes (expected: at least 0"
                    + " and less than pega.pool.size, " + pool.capacityBytes() + " bytes)");
        }
    }

    /** The configuration without {@link #headroomBytes()}: eviction only when an allocation fails. */
    public EngineConfig(
            PoolConfig pool,
            Duration leaseTtl,
            Duration maintenanceInterval,
            Duration inflightMaxAge,
            int evictionBatch,
            boolean blockwiseAlloc,
            long hostAlignmentBytes,
            String admission,
            Duration saveDeadline) {
        this(
                pool,
                leaseTtl,
                maintenanceInterval,
                inflightMaxAge,
                evictionBatch,
                blockwiseAlloc,
                hostAlignmentBytes,
                admission,
                saveDeadline,
                0);
    }

    /** The configuration with the default {@link #saveDeadline()}. */
    public EngineConfig(
            PoolConfig pool,
            Duration leaseTtl,
            Duration maintenanceInterval,
            Duration inflightMaxAge,
            int evictionBatch,
            boolean blockwiseAlloc,
            long hostAlignmentBytes,
            String admission) {
        this(
                pool,
                leaseTtl,
                maintenanceInterval,
                inflightMaxAge,
                evictionBatch,
                blockwiseAlloc,
                hostAlignmentBytes,
                admission,
                DEFAULT_SAVE_DEADLINE);
    }

    private static void requirePositive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + ": " + d + " (expected: a positive duration)");
        }
    }

    /** The reference's defaults around the given pool. */
    public static EngineConfig defaults(PoolConfig pool) {
        return new EngineConfig(
                pool, Duration.ofSeconds(600), Duration.ofSeconds(30), Duration.ofSeconds(300), 64, false, 1, "lru");
    }

    public EngineConfig withLeaseTtl(Duration ttl) {
        return new EngineConfig(
                pool,
                ttl,
                maintenanceInterval,
                inflightMaxAge,
                evictionBatch,
                blockwiseAlloc,
                hostAlignmentBytes,
                admission,
                saveDeadline,
                headroomBytes);
    }

    public EngineConfig withHostAlignmentBytes(long alignmentBytes) {
        return new EngineConfig(
                pool,
                leaseTtl,
                maintenanceInterval,
                inflightMaxAge,
                evictionBatch,
                blockwiseAlloc,
                alignmentBytes,
                admission,
                saveDeadline,
                headroomBytes);
    }

    public EngineConfig withSaveDeadline(Duration deadline) {
        return new EngineConfig(
                pool,
                leaseTtl,
                maintenanceInterval,
                inflightMaxAge,
                evictionBatch,
                blockwiseAlloc,
                hostAlignmentBytes,
                admission,
                deadline,
                headroomBytes);
    }

    public EngineConfig withBlockwiseAlloc(boolean blockwise) {
        return new EngineConfig(
                pool,
                leaseTtl,
                maintenanceInterval,
                inflightMaxAge,
                evictionBatch,
                blockwise,
                hostAlignmentBytes,
                admission,
                saveDeadline,
                headroomBytes);
    }

    /** The configuration with another {@link #admission()} ({@code lru}, {@code tinylfu} or {@code caffeine}). */
    public EngineConfig withAdmission(String policy) {
        return new EngineConfig(
                pool,
                leaseTtl,
                maintenanceInterval,
                inflightMaxAge,
                evictionBatch,
                blockwiseAlloc,
                hostAlignmentBytes,
                policy,
                saveDeadline,
                headroomBytes);
    }

    /** The configuration with another {@link #headroomBytes()}. */
    public EngineConfig withHeadroomBytes(long bytes) {
        return new EngineConfig(
                pool,
                leaseTtl,
                maintenanceInterval,
                inflightMaxAge,
                evictionBatch,
                blockwiseAlloc,
                hostAlignmentBytes,
                admission,
                saveDeadline,
                bytes);
    }
}
