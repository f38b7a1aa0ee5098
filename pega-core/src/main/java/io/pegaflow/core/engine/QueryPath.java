package io.pegaflow.core.engine;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.GroupHash;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.cache.BlockCache;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.Instance;
import io.pegaflow.core.lease.LeaseId;
import io.pegaflow.core.lease.LeaseTable;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.core.metrics.EngineMetrics;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.core.tier.PrefetchTable;
import io.pegaflow.core.tier.TierAttribution;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * QueryPrefetch: the longest prefix of the request's hashes that is sealed and resident, under the instance's
 * namespace, returned with a lease that keeps those blocks alive for the loads that follow.
 *
 * <p>With a {@link BackingTier}, a RAM-miss suffix starts a background fetch and the query answers Loading until a
 * poll finds the fetch done. Unlike the reference, a finished fetch is only handed to a poll from the same instance
 * with the same hashes; anything else starts over (see {@link PrefetchTable}).
 */
final class QueryPath {
    private final InstanceRegistry instances;
    private final BlockCache cache;
    private final LeaseTable leases;
    private final EngineMetrics metrics;
    private final PrefetchTable prefetch;

    QueryPath(
            InstanceRegistry instances,
            BlockCache cache,
            LeaseTable leases,
            EngineMetrics metrics,
            PrefetchTable prefetch) {
        this.instances = instances;
        this.cache = cache;
        this.leases = leases;
        this.metrics = metrics;
        this.prefetch = prefetch;
    }

    /**
     * @param group the storage group (upstream {@code QueryRequest.group_id}): 0 asks for the longest prefix; a state
     *     group ({@code > 0}) asks which hashes are members, each position on its own ({@link #members}), or with
     *     {@code waitForFullPrefix} for all of them or nothing, fetched from slower tiers if need be
     * @param waitForFullPrefix all or nothing from the backing tiers (upstream #411)
     * @throws EngineException INVALID_ARGUMENT for a group the instance does not have: an unknown group is the
     *     caller's bug, not a miss
     */
    QueryOutcome query(String instanceId, List<byte[]> hashes, String reqId, int group, boolean waitForFullPrefix) {
        if (reqId.isEmpty()) {
            throw EngineException.badRequest("req_id must not be empty");
        }
        Instance instance = instances.require(instanceId);
        instance.requireSealed();
        instance.totalSlots(group); // refuses a group the instance does not have
        String namespace = instance.namespace();
        int requested = hashes.size();
        BlockKey[] keyArray = new BlockKey[requested];
        for (int i = 0; i < requested; i++) {
            keyArray[i] = new BlockKey(namespace, GroupHash.of(hashes.get(i), group));
        }
        List<BlockKey> keys = Arrays.asList(keyArray);
        if (group != 0 && !waitForFullPrefix) {
            return members(instance, keys);
        }
        boolean set = group != 0;
        // Without a backing tier no prefetch task can exist: skip the table's monitor on every query.
        boolean tiered = prefetch.hasTier();
        if (tiered) {
            PrefetchTable.Poll poll = prefetch.poll(instanceId, reqId, keys, waitForFullPrefix);
            if (poll.loading()) {
                return QueryOutcome.LOADING;
            }
            if (poll.ready() != null) {
                List<SealedBlock> ready = poll.ready();
                return ready(instance, ready.toArray(new SealedBlock[0]), ready.size(), requested, set);
            }
        }
        SealedBlock[] found = new SealedBlock[requested];
        int hits = cache.prefix(keys, found);
        if (tiered && hits < requested) {
            List<SealedBlock> prefix = new ArrayList<>(Arrays.asList(found).subList(0, hits));
            boolean started;
            try {
                started = prefetch.start(instanceId, reqId, keys, prefix, waitForFullPrefix);
            } catch (EngineException e) {
                prefix.forEach(SealedBlock::release); // refused: the references are still ours
                throw e;
            }
            if (started) {
                return QueryOutcome.LOADING; // attributed when the fetch is delivered
            }
        }
        if (requested > 0) {
            TierAttribution.ramOnly(requested, hits).recordInto(metrics);
        }
        return ready(instance, found, hits, requested, set);
    }

    /**
     * Membership of a state group (upstream {@code query_group_membership}, RAM only, never Loading): every position
     * answers on its own, since a recurrent group holds sparse checkpoints and the connector picks the hit it wants;
     * the lease pins exactly the hits in position order.
     */
    private QueryOutcome members(Instance instance, List<BlockKey> keys) {
        SealedBlock[] found = new SealedBlock[keys.size()];
        int hits = cache.each(keys, found);
        metrics.add(EngineCounter.CACHE_BLOCK_HITS, hits);
        metrics.add(EngineCounter.CACHE_BLOCK_MISSES, keys.size() - hits);
        if (hits == 0) {
            return QueryOutcome.members(new int[0], new byte[0]);
        }
        int[] positions = new int[hits];
        SealedBlock[] leased = new SealedBlock[hits];
        for (int i = 0, h = 0; i < found.length; i++) {
            SealedBlock block = found[i];
            if (block != null) {
                positions[h] = i;
                leased[h++] = block;
            }
        }
        return QueryOutcome.members(positions, lease(instance, leased));
    }

    /**
     * Leases the first {@code hits} of {@code blocks} (taking over their references) and counts hits and misses. A
     * {@code set} query (a state group with {@code wait_for_full_prefix}) is all or nothing: short of every hash, it
     * pins nothing and reports the leading hits as positions {@code 0..hits}, as upstream does.
     */
    private QueryOutcome ready(Instance instance, SealedBlock[] blocks, int hits, int requested, boolean set) {
        metrics.add(EngineCounter.CACHE_BLOCK_HITS, hits);
        metrics.add(EngineCounter.CACHE_BLOCK_MISSES, requested - hits);
        if (set) {
            if (hits < requested || hits == 0) {
                for (int i = 0; i < hits; i++) {
                    blocks[i].release();
                }
                return QueryOutcome.shortSet(hits);
            }
            return QueryOutcome.members(QueryOutcome.shortSet(hits).hitPositions(), lease(instance, blocks));
        }
        if (hits == 0) {
            return QueryOutcome.MISS;
        }
        // The all-hit case hands the lookup array itself to the lease: no copy of N references.
        SealedBlock[] leased = hits == blocks.length ? blocks : Arrays.copyOf(blocks, hits);
        return QueryOutcome.ready(hits, lease(instance, leased));
    }

    /** A lease over {@code blocks}, taking over their references; refused, it gives them back. */
    private byte[] lease(Instance instance, SealedBlock[] blocks) {
        LeaseId id;
        try {
            id = leases.create(instance.id(), blocks, instance.worldSize());
        } catch (EngineException e) {
            for (SealedBlock block : blocks) {
                block.release(); // refused: the references are still ours
            }
            throw e;
        }
        return id.toBytes();
    }

    /** Release. */
    void release(byte[] lease) {
        LeaseId id = LeaseId.parse(lease);
        if (!leases.release(id)) {
            throw EngineException.failedPrecondition("query lease is unknown or expired");
        }
    }
}
