package io.pegaflow.core.engine;

import io.pegaflow.core.memory.PoolConfig;
import java.time.Duration;
import java.util.function.Consumer;

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

    private static void requirePositive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + ": " + d + " (expected: a positive duration)");
        }
    }

    /** The reference's defaults around the given pool, with our 30 s {@link #saveDeadline()} and no headroom. */
    public static EngineConfig defaults(PoolConfig pool) {
        return new EngineConfig(
                pool,
                Duration.ofSeconds(600),
                Duration.ofSeconds(30),
                Duration.ofSeconds(300),
                64,
                false,
                1,
                "lru",
                DEFAULT_SAVE_DEADLINE,
                0);
    }

    public EngineConfig withLeaseTtl(Duration ttl) {
        return edit(v -> v.leaseTtl = ttl);
    }

    public EngineConfig withEvictionBatch(int blocks) {
        return edit(v -> v.evictionBatch = blocks);
    }

    public EngineConfig withHostAlignmentBytes(long alignmentBytes) {
        return edit(v -> v.hostAlignmentBytes = alignmentBytes);
    }

    public EngineConfig withSaveDeadline(Duration deadline) {
        return edit(v -> v.saveDeadline = deadline);
    }

    public EngineConfig withBlockwiseAlloc(boolean blockwise) {
        return edit(v -> v.blockwiseAlloc = blockwise);
    }

    /** The configuration with another {@link #admission()} ({@code lru}, {@code tinylfu} or {@code caffeine}). */
    public EngineConfig withAdmission(String policy) {
        return edit(v -> v.admission = policy);
    }

    /** The configuration with another {@link #headroomBytes()}. */
    public EngineConfig withHeadroomBytes(long bytes) {
        return edit(v -> v.headroomBytes = bytes);
    }

    /** A copy with some values changed, validated as a new configuration is. */
    private EngineConfig edit(Consumer<Values> change) {
        Values v = new Values(this);
        change.accept(v);
        return v.build();
    }

    /** The components of a configuration being copied: the one place besides the record that lists them all. */
    private static final class Values {
        final PoolConfig pool;
        Duration leaseTtl;
        final Duration maintenanceInterval;
        final Duration inflightMaxAge;
        int evictionBatch;
        boolean blockwiseAlloc;
        long hostAlignmentBytes;
        String admission;
        Duration saveDeadline;
        long headroomBytes;

        Values(EngineConfig c) {
            pool = c.pool;
            leaseTtl = c.leaseTtl;
            maintenanceInterval = c.maintenanceInterval;
            inflightMaxAge = c.inflightMaxAge;
            evictionBatch = c.evictionBatch;
            blockwiseAlloc = c.blockwiseAlloc;
            hostAlignmentBytes = c.hostAlignmentBytes;
            admission = c.admission;
            saveDeadline = c.saveDeadline;
            headroomBytes = c.headroomBytes;
        }

        EngineConfig build() {
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
                    headroomBytes);
        }
    }
}
