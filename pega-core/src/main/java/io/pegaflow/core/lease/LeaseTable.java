package io.pegaflow.core.lease;

import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.kernel.agent.NanoClock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Query leases ({@code pegaflow-core/src/lease.rs} of novitalabs/pegaflow v0.22.4): a lease keeps the blocks a query
 * found alive until {@code world_size} loads consumed it, it is released, its instance goes away, or its TTL passes.
 *
 * <p>State machine: {@code ACTIVE(k) -consume-> ACTIVE(k-1) ... ACTIVE(1) -consume-> GONE}; release, expiry and
 * instance teardown go to GONE from any state; any use of a GONE id is "unknown or expired".
 *
 * <p>Ownership: a lease owns one reference per block. A consume that leaves the lease alive hands out new references;
 * the last consume hands over the lease's own. Everything that ends a lease releases them exactly once.
 *
 * <p>Thread-safe: one monitor. Every operation is O(1) plus the expired leases it sweeps.
 */
public final class LeaseTable {
    private final NanoClock clock;
    private final long ttlNanos;
    // Insertion order is expiry order (one TTL, monotonic clock), so a sweep stops at the first live lease.
    private final Map<LeaseId, Lease> leases = new LinkedHashMap<>();
    private final Map<String, Integer> perInstance = new HashMap<>();
    private final int maxPerInstance;

    private static final class Lease {
        final String instanceId;
        final SealedBlock[] blocks;
        final long expiresAtNanos;
        int remaining;

        Lease(String instanceId, SealedBlock[] blocks, int remaining, long expiresAtNanos) {
            this.instanceId = instanceId;
            this.blocks = blocks;
            this.remaining = remaining;
            this.expiresAtNanos = expiresAtNanos;
        }

        void releaseBlocks() {
            for (SealedBlock block : blocks) {
                block.release();
            }
        }
    }

    public LeaseTable(NanoClock clock, long ttlNanos) {
        this(clock, ttlNanos, Integer.MAX_VALUE);
    }

    /** @param maxPerInstance live leases one instance may hold ({@code pega.limits.leases-per-instance}) */
    public LeaseTable(NanoClock clock, long ttlNanos, int maxPerInstance) {
        this.clock = clock;
        this.ttlNanos = ttlNanos;
        this.maxPerInstance = maxPerInstance;
    }

    /**
     * Creates a lease that takes over the caller's references to {@code blocks} (non-empty). When the instance holds
     * its maximum of leases the call fails and the references stay the caller's.
     *
     * @param consumers how many loads may use it: {@code max(1, world_size)}
     * @throws EngineException RESOURCE_EXHAUSTED naming {@code pega.limits.leases-per-instance}
     */
    public LeaseId create(String instanceId, SealedBlock[] blocks, int consumers) {
        if (blocks.length == 0) {
            throw EngineException.invalidArgument("a query lease needs at least one block");
        }
        long now = clock.nanoTime();
        synchronized (this) {
            sweepLocked(now);
            int held = perInstance.getOrDefault(instanceId, 0);
            if (held >= maxPerInstance) {
                throw EngineException.resourceExhausted("instance " + instanceId + " holds " + held
                        + " query leases, release some first: pega.limits.leases-per-instance is " + maxPerInstance);
            }
            LeaseId id;
            do {
                id = LeaseId.random();
            } while (leases.containsKey(id));
            leases.put(id, new Lease(instanceId, blocks, Math.max(1, consumers), now + ttlNanos));
            perInstance.merge(instanceId, 1, Integer::sum);
            return id;
        }
    }

    /**
     * Takes one share of a lease for a load of {@code instanceId}. The returned blocks carry references the caller
     * must release.
     *
     * @throws EngineException INTERNAL "storage error: query lease is unknown or expired", or INTERNAL naming the owner
     *     when another instance asks (the lease is then left untouched)
     */
    public SealedBlock[] consume(String instanceId, LeaseId id) {
        synchronized (this) {
            sweepLocked(clock.nanoTime());
            Lease lease = leases.get(id);
            if (lease == null) {
                throw EngineException.storage("query lease is unknown or expired");
            }
            if (!lease.instanceId.equals(instanceId)) {
                throw EngineException.storage(
                        "query lease belongs to instance " + lease.instanceId + ", got " + instanceId);
            }
            if (lease.remaining > 1) {
                lease.remaining--;
                for (SealedBlock block : lease.blocks) {
                    block.retain();
                }
                return lease.blocks.clone();
            }
            leases.remove(id);
            forget(lease);
            return lease.blocks;
        }
    }

    /** Ends a lease whatever its remaining count; false when it did not exist (or already ended). */
    public boolean release(LeaseId id) {
        Lease lease;
        synchronized (this) {
            sweepLocked(clock.nanoTime());
            lease = leases.remove(id);
            if (lease != null) {
                forget(lease);
            }
        }
        if (lease == null) {
            return false;
        }
        lease.releaseBlocks();
        return true;
    }

    /** Ends every lease of an instance (its teardown); returns how many. */
    public int releaseInstance(String instanceId) {
        java.util.List<Lease> removed = new java.util.ArrayList<>();
        synchronized (this) {
            Iterator<Lease> it = leases.values().iterator();
            while (it.hasNext()) {
                Lease lease = it.next();
                if (lease.instanceId.equals(instanceId)) {
                    it.remove();
                    removed.add(lease);
                }
            }
            perInstance.remove(instanceId);
        }
        removed.forEach(Lease::releaseBlocks);
        return removed.size();
    }

    /** Ends every expired lease; returns how many. */
    public int sweep() {
        synchronized (this) {
            return sweepLocked(clock.nanoTime());
        }
    }

    private int sweepLocked(long now) {
        int n = 0;
        Iterator<Lease> it = leases.values().iterator();
        while (it.hasNext()) {
            Lease lease = it.next();
            if (now - lease.expiresAtNanos < 0) {
                break;
            }
            it.remove();
            forget(lease);
            lease.releaseBlocks();
            n++;
        }
        return n;
    }

    public synchronized int size() {
        return leases.size();
    }

    /** The live leases, soonest to expire first (the admin surface; O(live leases) under the monitor). */
    public List<LeaseSummary> summaries() {
        long now = clock.nanoTime();
        synchronized (this) {
            sweepLocked(now);
            List<LeaseSummary> out = new ArrayList<>(leases.size());
            leases.forEach((id, lease) -> out.add(new LeaseSummary(
                    String.format(Locale.ROOT, "%08x", id.high() >>> 32),
                    lease.instanceId,
                    lease.blocks.length,
                    lease.remaining,
                    Math.max(0, lease.expiresAtNanos - now))));
            return out;
        }
    }

    /** Live leases of one instance. */
    public synchronized int sizeOf(String instanceId) {
        return perInstance.getOrDefault(instanceId, 0);
    }

    private void forget(Lease lease) {
        perInstance.computeIfPresent(lease.instanceId, (k, n) -> n == 1 ? null : n - 1);
    }

    /** Ends every lease (engine shutdown). */
    public int clear() {
        java.util.List<Lease> removed;
        synchronized (this) {
            removed = new java.util.ArrayList<>(leases.values());
            leases.clear();
            perInstance.clear();
        }
        removed.forEach(Lease::releaseBlocks);
        return removed.size();
    }
}
