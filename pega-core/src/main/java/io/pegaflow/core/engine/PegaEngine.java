package io.pegaflow.core.engine;

import io.pegaflow.core.agent.NanoClock;
import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.cache.AdmissionPolicy;
import io.pegaflow.core.cache.BlockCache;
import io.pegaflow.core.cache.EvictedBlocks;
import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.DeviceContext;
import io.pegaflow.core.instance.Instance;
import io.pegaflow.core.lease.LeaseTable;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.metrics.EngineMetrics;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.core.tier.PrefetchTable;
import io.pegaflow.core.tier.SealedBlockSpill;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine facade: everything the gRPC and HTTP adapters call. It owns the pool, the RAM index, the lease table,
 * the sealing worker and the instances; the device backend is handed in and closed last.
 *
 * <p>Every public method is thread-safe and validates its request in the reference's order with its messages, so the
 * adapters only translate. Errors are {@link EngineException}s whose kind decides the gRPC code.
 *
 * <p>Lifecycle: construct, serve, {@link #close()} once (idempotent): instances are torn down (lanes drained,
 * mappings closed), leases released, the index drained, then the pool and the backend closed.
 */
public final class PegaEngine implements AutoCloseable, BlockIndexListener.ResidentBlocks {
    private static final Logger LOG = LoggerFactory.getLogger(PegaEngine.class);

    private final EngineConfig config;
    private final PinnedMemoryPool pool;
    private final DeviceBackend backend;
    private final EngineMetrics metrics = new EngineMetrics();
    private final BlockCache cache;
    private final LeaseTable leases;
    private final InstanceRegistry instances = new InstanceRegistry();
    private final SessionTable sessions = new SessionTable();
    private final SealWorker sealer;
    private final PoolReclaimer reclaimer;
    private final PrefetchTable prefetch;
    private final SavePath savePath;
    private final LoadPath loadPath;
    private final QueryPath queryPath;
    private final RegisterPath registerPath;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile BlockIndexListener indexListener = BlockIndexListener.NONE;
    private volatile SealedBlockSpill spill = SealedBlockSpill.NONE;

    public PegaEngine(
            EngineConfig config,
            PinnedMemoryPool pool,
            DeviceBackend backend,
            AdmissionPolicy admission,
            BackingTier backingTier,
            NanoClock clock) {
        this.config = config;
        this.pool = pool;
        this.backend = backend;
        this.cache = new BlockCache(admission);
        this.leases = new LeaseTable(clock, config.leaseTtl().toNanos());
        this.reclaimer = new PoolReclaimer(
                pool, cache, metrics, config.evictionBatch(), this::announceEviction, this::awaitPendingSeals);
        this.sealer = new SealWorker(cache, metrics, clock, this::onInserted);
        this.prefetch = new PrefetchTable(backingTier, cache, metrics, clock);
        this.savePath = new SavePath(instances, cache, reclaimer, sealer, metrics, clock, config.blockwiseAlloc());
        this.loadPath = new LoadPath(instances, leases, metrics, clock);
        this.queryPath = new QueryPath(instances, cache, leases, metrics, prefetch);
        this.registerPath = new RegisterPath(instances, backend, config.hostAlignmentBytes());
    }

    /** An engine with LRU admission, no backing tier and the system clock. */
    public static PegaEngine create(EngineConfig config, PinnedMemoryPool pool, DeviceBackend backend) {
        return new PegaEngine(config, pool, backend, AdmissionPolicy.ALWAYS, null, NanoClock.SYSTEM);
    }

    public void setIndexListener(BlockIndexListener listener) {
        this.indexListener = listener == null ? BlockIndexListener.NONE : listener;
    }

    public void setSpill(SealedBlockSpill spill) {
        this.spill = spill == null ? SealedBlockSpill.NONE : spill;
    }

    // ---------------------------------------------------------------- RPCs

    /** RegisterContextBatch (spec/engine-api.md §5.1). */
    public void registerContextBatch(RegisterCommand cmd) {
        ensureOpen();
        registerPath.register(cmd);
    }

    /** Save (§5.2): returns after the device-to-pool copy completed; sealing follows asynchronously. */
    public void save(String instanceId, long tpRank, long ppRank, int deviceId, List<LayerSave> saves) {
        ensureOpen();
        savePath.save(instanceId, tpRank, ppRank, deviceId, saves);
    }

    /** Load (§5.5): returns once the copy is queued; completion is signalled through {@code loadStateShm}. */
    public void load(
            String instanceId,
            long tpRank,
            int deviceId,
            String loadStateShm,
            List<String> layerNames,
            List<LeaseLoad> loads) {
        ensureOpen();
        loadPath.load(instanceId, tpRank, deviceId, loadStateShm, layerNames, loads);
    }

    /** QueryPrefetch (§5.3). */
    public QueryOutcome queryPrefetch(String instanceId, List<byte[]> hashes, String reqId) {
        ensureOpen();
        return queryPath.query(instanceId, hashes, reqId);
    }

    /** Release (§5.4). */
    public void release(byte[] lease) {
        queryPath.release(lease);
    }

    /** UnregisterContext (§5.6): drops the instance, its device contexts (after draining) and its leases. */
    public void unregister(String instanceId) {
        if (teardown(instanceId) < 0) {
            throw EngineException.instanceMissing(instanceId);
        }
    }

    /** Installs the Session of an instance, replacing any previous one; returns its token (§5.7). */
    public long openSession(String instanceId, String namespace, long tpSize, long worldSize) {
        if (instanceId.isEmpty()) {
            throw EngineException.badRequest("instance_id must not be empty");
        }
        return sessions.open(instanceId, namespace, tpSize, worldSize);
    }

    /** Ends a Session; tears the instance down when the token is still the current one. */
    public void closeSession(String instanceId, long token) {
        if (sessions.close(instanceId, token)) {
            int removed = teardown(instanceId);
            LOG.info("session of {} closed: instance {}", instanceId, removed < 0 ? "was not registered" : "removed");
        }
    }

    // ---------------------------------------------------------------- operations

    public List<String> instanceIds() {
        return instances.ids();
    }

    /**
     * The operator's instance cleanup: one instance, or all when {@code instanceId} is null.
     *
     * @return null when a named instance did not exist and nothing was dropped (the endpoint answers 404)
     */
    public CleanupResult cleanupInstances(String instanceId) {
        List<String> ids = instanceId == null ? instances.ids() : List.of(instanceId);
        List<String> removed = new ArrayList<>();
        int tensors = 0;
        for (String id : ids) {
            int n = teardown(id);
            if (n >= 0) {
                removed.add(id);
                tensors += n;
            }
        }
        if (instanceId != null && removed.isEmpty()) {
            return null;
        }
        return new CleanupResult(removed, tensors);
    }

    /** Sweeps expired leases and drains the whole RAM index (§3.7). */
    public MemoryCleanupResult cleanupMemory() {
        leases.sweep();
        EvictedBlocks evicted = cache.evictAll();
        long evictedBytes = evicted.footprintBytes();
        long still = evicted.stillReferenced();
        long count = evicted.count();
        long reclaimed = count == 0 ? 0 : reclaimer.drop(evicted);
        return new MemoryCleanupResult(count, evictedBytes, reclaimed, still);
    }

    /** Sweeps expired leases and collects stale in-flight blocks and prefetch tasks. Driven by a timer. */
    public void runMaintenance() {
        leases.sweep();
        long maxAge = config.inflightMaxAge().toNanos();
        prefetch.collect(maxAge);
        try {
            sealer.gc(maxAge).get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("in-flight collection did not finish: {}", e.toString());
        }
    }

    /** Waits until every Save accepted so far has been sealed (the reference's flush barrier; tests and benchmarks). */
    public void flushSeals() {
        try {
            sealer.flush().get(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            throw EngineException.internal("seal flush failed: " + e, e);
        }
    }

    /** The reclaimer's last resort before "pool exhausted": let queued Saves become evictable. Never throws. */
    private void awaitPendingSeals() {
        try {
            sealer.flush().get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("waiting for pending seals failed: {}", e.toString());
        }
    }

    @Override
    public void forEachResident(int batchSize, BlockIndexListener sink) {
        cache.forEachKeyBatch(batchSize, batch -> {
            java.util.Map<String, List<byte[]>> byNamespace = new java.util.LinkedHashMap<>();
            for (BlockKey key : batch) {
                byNamespace
                        .computeIfAbsent(key.namespace(), k -> new ArrayList<>())
                        .add(key.hash());
            }
            byNamespace.forEach(sink::onSealed);
        });
    }

    /**
     * Allocates pool memory for a block a backing tier re-materialises, evicting RAM blocks when the pool is full
     * (the same path as Save). Called by the tier's own threads, never under an engine lock.
     *
     * @return the allocation (one reference, owned by the caller), or null when the pool stays full
     */
    public io.pegaflow.core.memory.PinnedAllocation allocateWithReclaim(long bytes) {
        ensureOpen();
        return reclaimer.allocate(bytes);
    }

    // ---------------------------------------------------------------- views for metrics and the admin surface

    public EngineMetrics metrics() {
        return metrics;
    }

    public PinnedMemoryPool pool() {
        return pool;
    }

    public BlockCache cache() {
        return cache;
    }

    public int activeLeases() {
        return leases.size();
    }

    public int instanceCount() {
        return instances.size();
    }

    public int sessionCount() {
        return sessions.size();
    }

    public String backendName() {
        return backend.name();
    }

    public EngineConfig config() {
        return config;
    }

    // ---------------------------------------------------------------- internals

    /** Removes an instance and everything it owns; returns the layer mappings closed, or -1 if it did not exist. */
    private int teardown(String instanceId) {
        Instance instance = instances.remove(instanceId);
        leases.releaseInstance(instanceId);
        prefetch.dropInstance(instanceId);
        if (instance == null) {
            return -1;
        }
        int tensors = 0;
        for (DeviceContext device : instance.detachDevices()) {
            tensors += device.closeAndCount();
        }
        return tensors;
    }

    private void onInserted(String namespace, List<BlockKey> keys, List<SealedBlock> blocks) {
        spill.offer(keys, blocks);
        BlockIndexListener listener = indexListener;
        if (listener == BlockIndexListener.NONE) {
            return; // nobody to announce to: skip the per-block hash list
        }
        List<byte[]> hashes = new ArrayList<>(keys.size());
        for (BlockKey key : keys) {
            hashes.add(key.hash());
        }
        listener.onSealed(namespace, hashes);
    }

    private void announceEviction(EvictedBlocks evicted) {
        BlockIndexListener listener = indexListener;
        if (listener == BlockIndexListener.NONE) {
            return;
        }
        java.util.Map<String, List<byte[]>> byNamespace = new java.util.LinkedHashMap<>();
        for (BlockKey key : evicted.keys()) {
            byNamespace.computeIfAbsent(key.namespace(), k -> new ArrayList<>()).add(key.hash());
        }
        byNamespace.forEach(listener::onEvicted);
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw EngineException.unavailable("engine is shutting down");
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (String id : instances.ids()) {
            teardown(id);
        }
        sealer.close();
        leases.clear();
        EvictedBlocks evicted = cache.evictAll();
        evicted.releaseAll();
        int outstanding = pool.outstandingAllocations();
        if (outstanding != 0) {
            LOG.warn("{} pool allocations still held at shutdown", outstanding);
        }
        pool.close();
        backend.close();
    }
}
