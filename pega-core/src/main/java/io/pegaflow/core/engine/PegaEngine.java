package io.pegaflow.core.engine;

import io.pegaflow.core.cache.BlockCache;
import io.pegaflow.core.cache.CacheView;
import io.pegaflow.core.cache.EvictedBlocks;
import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.Connector;
import io.pegaflow.core.instance.Instance;
import io.pegaflow.core.instance.InstanceLimits;
import io.pegaflow.core.instance.Principal;
import io.pegaflow.core.lease.LeaseTable;
import io.pegaflow.core.lease.TransferLockTable;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolView;
import io.pegaflow.core.metrics.DurationRecorder;
import io.pegaflow.core.metrics.EngineMetrics;
import io.pegaflow.core.metrics.EngineMetricsView;
import io.pegaflow.core.metrics.LoadPhase;
import io.pegaflow.core.metrics.PhaseRecorders;
import io.pegaflow.core.metrics.SavePhase;
import io.pegaflow.core.tier.PrefetchTable;
import io.pegaflow.core.tier.ReclaimingAllocator;
import io.pegaflow.core.tier.SealedBlockSpill;
import io.pegaflow.core.tier.TierChain;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.IdleStrategy;
import io.pegaflow.kernel.agent.NanoClock;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine facade: everything the gRPC and HTTP adapters call. It owns the pool, the RAM index, the lease table,
 * the sealing worker, the instances, the backing tiers and the device backend.
 *
 * <p>Every public method is thread-safe and validates its request in the reference's order with its messages, so the
 * adapters only translate. Errors are {@link EngineException}s whose kind decides the gRPC code.
 *
 * <p>Assembly: one {@link EngineContext}, concluded once, then {@link #launch}; the engine is immutable afterwards
 * (no setters, no late binding). Its parts are built bottom-up from the context, so none of them holds the facade:
 * the tiers get the {@link ReclaimingAllocator} with each fetch, the reclaimer gets the index announcements and the
 * sealer's barrier, the sealer gets the spills and the announcements.
 *
 * <p>Lifecycle: launch, serve, {@link #close()} once (idempotent): instances are torn down (lanes drained, mappings
 * closed), the push lanes of {@link #workers()} stopped, the sealing worker stopped, the tiers closed in reverse order, leases released, the index drained, then
 * the pool and the backend closed.
 */
public final class PegaEngine implements AutoCloseable, BlockIndexListener.ResidentBlocks {
    private static final Logger LOG = LoggerFactory.getLogger(PegaEngine.class);

    private final EngineConfig config;
    private final PinnedMemoryPool pool;
    private final DeviceBackend backend;
    private final EngineMetrics metrics = new EngineMetrics();
    private final BlockCache cache;
    private final LeaseTable leases;
    private final TransferLockTable transferLocks;
    private final TransferGrants transferGrants;
    private final InstanceRegistry instances = new InstanceRegistry();
    private final SessionTable sessions = new SessionTable();
    private final TierChain tiers;
    private final SealAgent sealer;
    private final AgentRunner maintenance;
    private final AgentGroup agents;
    private final PoolReclaimer reclaimer;
    private final StagingAllocator staging;
    private final SideRegistrations side;
    private final DeviceWorkers workers;
    private final PrefetchTable prefetch;
    private final SavePath savePath;
    private final LoadPath loadPath;
    private final QueryPath queryPath;
    private final RegisterPath registerPath;
    private final RestorePath restorePath;
    private final InstanceTeardown teardown;
    private final EngineStatus status;
    private final DetachedInstances detached;

    private volatile boolean retaining;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final EngineLimits limits;
    private final RegistrationBudget budget;

    private PegaEngine(EngineContext ctx) {
        this.config = ctx.config();
        this.limits = ctx.limits();
        this.budget = new RegistrationBudget(limits);
        this.pool = ctx.pool();
        this.backend = ctx.backend();
        this.tiers = ctx.chain();
        // Every tier's series exists before its first block: a meter registry binds the names it sees at startup.
        for (String tier : tiers.names()) {
            metrics.countTierRequests(tier, 0);
        }
        NanoClock clock = ctx.clock();
        RegistrationLog registrationLog = ctx.registrationLog();
        this.detached = new DetachedInstances(clock);
        this.cache = ctx.newCache(this::dropPolicyEvictions);
        this.leases = new LeaseTable(clock, config.leaseTtl().toNanos(), limits.leasesPerInstance());
        this.transferLocks = new TransferLockTable(
                clock,
                ctx.transferLockTimeout().toNanos(),
                Math.max(1, (long) Math.floor(pool.capacityBytes() * ctx.transferLockRequesterShare())),
                Math.max(1, (long) Math.floor(pool.capacityBytes() * ctx.transferLockPoolShare())));
        this.transferGrants =
                new TransferGrants(cache, transferLocks, ctx.transferLockRequesterShare(), ctx.transferLockPoolShare());
        IndexAnnouncements announcements = new IndexAnnouncements(ctx.indexListeners());
        List<SealedBlockSpill> spills = ctx.spills();
        this.agents = ctx.agents();
        this.sealer = new SealAgent(cache, metrics, clock, config.saveDeadline(), (namespace, keys, blocks) -> {
            for (SealedBlockSpill spill : spills) {
                spill.offer(keys, blocks);
            }
            announcements.sealed(namespace, keys);
            keepHeadroom(); // the resident set just grew: make room for the next Saves here, not on their threads
        });
        this.reclaimer = new PoolReclaimer(
                pool, cache, metrics, config.evictionBatch(), config.headroomBytes(), announcements, sealer);
        this.prefetch = new PrefetchTable(
                tiers,
                reclaimer,
                cache,
                metrics,
                clock,
                limits.prefetchesPerInstance(),
                keys -> announcements.sealed(keys.get(0).namespace(), keys));
        this.savePath = new SavePath(
                instances,
                cache,
                reclaimer,
                sealer,
                metrics,
                clock,
                config.blockwiseAlloc(),
                config.saveDeadline(),
                RequestShare.of(pool, limits.requestPoolShare()));
        this.side = new SideRegistrations(budget, (id, caller) -> {
            instances.requireOwnerOrAbsent(id, caller);
            sessions.requireOwnerOrAbsent(id, caller);
        });
        this.staging = new StagingAllocator(reclaimer, RequestShare.of(pool, limits.requestPoolShare()));
        this.workers = new DeviceWorkers(backend, budget, agents);
        this.loadPath = new LoadPath(instances, leases, metrics, clock);
        this.queryPath = new QueryPath(instances, cache, leases, metrics, prefetch);
        this.registerPath = new RegisterPath(
                instances, backend, config.hostAlignmentBytes(), agents, registrationLog, budget, limits.instances());
        this.teardown = new InstanceTeardown(
                instances,
                leases,
                prefetch,
                registrationLog,
                budget,
                detached,
                side,
                ctx.detachedIdleTimeout().toNanos());
        this.restorePath = new RestorePath(registerPath, detached, clock, id -> teardown.end(id, true));
        this.status = new EngineStatus(instances, sessions, leases, detached, restorePath);
        long interval = config.maintenanceInterval().toNanos();
        this.maintenance = new AgentRunner(
                new MaintenanceAgent(clock, interval, this::runMaintenance),
                IdleStrategy.parking(Math.min(interval, MaintenanceAgent.MAX_PARK_NANOS)));
    }

    /** Starts the agents; nothing runs before. */
    private void start() {
        sealer.start(agents);
        agents.add(maintenance.start());
    }

    /**
     * Concludes {@code ctx} (unless it already was) and starts an engine from it. Ownership of the context's pool,
     * backend and tiers passes to this call: the engine closes them, and if the launch fails they are closed before
     * the exception leaves.
     *
     * @throws IllegalArgumentException when the context is incomplete or unusable
     */
    public static PegaEngine launch(EngineContext ctx) {
        PegaEngine engine = null;
        try {
            if (!ctx.isConcluded()) {
                ctx.conclude();
            }
            engine = new PegaEngine(ctx);
            engine.start();
            return engine;
        } catch (RuntimeException | Error e) {
            if (engine != null) {
                engine.close(); // stops what started, then closes the owned parts
            } else {
                ctx.closeOwned();
            }
            throw e;
        }
    }

    /** An engine with the configured admission, no backing tier and the system clock (tests, benchmarks). */
    public static PegaEngine launch(EngineConfig config, PinnedMemoryPool pool, DeviceBackend backend) {
        return launch(new EngineContext().config(config).pool(pool).backend(backend));
    }

    // ---------------------------------------------------------------- RPCs

    /**
     * RegisterContextBatch, journaled before it answers, for {@code cmd.principal()}: an instance id that another
     * principal registered (restored ones included), or whose Session another principal holds, is refused before
     * anything is mapped. A registration for an instance that was restored detached replaces it: the restored instance
     * (every device of it) ends first.
     */
    public void registerContextBatch(RegisterCommand cmd) {
        ensureOpen();
        authorize(cmd.instanceId(), cmd.principal());
        teardown.replaceDetached(cmd.instanceId());
        registerPath.register(cmd, true);
    }

    /**
     * Re-opens registrations journaled by a previous process (decision 0010), before the server takes RPCs. Each
     * instance is restored whole or not at all: one whose memory is gone (shm unlinked, exporting process exited, IPC
     * handle invalid, device absent) is dropped with one log line naming it, and its journal entry removed. Restored
     * instances are detached until a Session adopts them or a registration replaces them.
     */
    public RestoreReport restore(List<RegisterCommand> journaled) {
        ensureOpen();
        return restorePath.restore(journaled);
    }

    /**
     * The ownership rule of every instance-scoped RPC (decision 0011, defect 6): a live instance or Session of
     * {@code instanceId} must belong to {@code caller}. An id nobody holds passes (the RPC itself reports it missing).
     *
     * @throws EngineException PERMISSION_DENIED
     */
    public void authorize(String instanceId, Principal caller) {
        instances.requireOwnerOrAbsent(instanceId, caller);
        sessions.requireOwnerOrAbsent(instanceId, caller);
        side.requireOwnerOrAbsent(instanceId, caller);
    }

    /** Save: returns after the device-to-pool copy completed; sealing follows asynchronously. */
    public void save(String instanceId, long tpRank, long ppRank, int deviceId, List<LayerSave> saves) {
        ensureOpen();
        detached.touch(instanceId);
        savePath.save(instanceId, tpRank, ppRank, deviceId, saves);
    }

    /** Load: returns once the copy is queued; completion is signalled through {@code loadStateShm}. */
    public void load(
            String instanceId,
            long tpRank,
            int deviceId,
            String loadStateShm,
            List<String> layerNames,
            List<LeaseLoad> loads) {
        ensureOpen();
        detached.touch(instanceId);
        loadPath.load(instanceId, tpRank, deviceId, loadStateShm, layerNames, loads);
    }

    /**
     * Load in the grouped form of pegaflow-llm 0.23.7 and later: each group's layers take only that group's targets.
     * Returns once the copy is queued, as {@link #load} does.
     */
    public void loadGroups(
            String instanceId,
            long tpRank,
            int deviceId,
            String loadStateShm,
            List<List<String>> groups,
            List<GroupedLeaseLoad> loads) {
        ensureOpen();
        detached.touch(instanceId);
        loadPath.loadGroups(instanceId, tpRank, deviceId, loadStateShm, groups, loads);
    }

    /** The connector an instance registered with, or null when no such instance is live. */
    public @Nullable Connector connectorOf(String instanceId) {
        Instance instance = instances.get(instanceId);
        return instance == null ? null : instance.connector();
    }

    /** QueryPrefetch of the longest prefix (storage group 0, partial answers allowed). */
    public QueryOutcome queryPrefetch(String instanceId, List<byte[]> hashes, String reqId) {
        return queryPrefetch(instanceId, hashes, reqId, 0, false);
    }

    /**
     * QueryPrefetch with the fields of later connectors: {@code group} 0 is a prefix query, a state group's is a
     * membership query (upstream #433); {@code waitForFullPrefix} makes the backing tiers all or nothing (upstream
     * #411).
     */
    public QueryOutcome queryPrefetch(
            String instanceId, List<byte[]> hashes, String reqId, int group, boolean waitForFullPrefix) {
        ensureOpen();
        detached.touch(instanceId);
        return queryPath.query(instanceId, hashes, reqId, group, waitForFullPrefix);
    }

    /** Release. */
    public void release(byte[] lease) {
        queryPath.release(lease);
    }

    /**
     * QueryBlocksForTransfer: looks each hash up in the RAM index (no prefix semantics, misses skipped) and locks what
     * it found under a new session, so a peer can read the blocks' memory until it releases the session or the session
     * expires. Whether transfers are configured at all is the adapter's question.
     */
    public TransferGrant lockForTransfer(String namespace, List<byte[]> hashes, String requesterId) {
        ensureOpen();
        return transferGrants.lock(namespace, hashes, requesterId);
    }

    /** ReleaseTransferLock: always succeeds; the blocks the session held, 0 for an unknown or ended one. */
    public int releaseTransferLock(String sessionId) {
        return transferLocks.release(sessionId);
    }

    /** Ends the transfer locks of a requester that came back as a new incarnation; returns how many. */
    public int releaseTransferLocksOf(String requesterId) {
        return transferLocks.releaseRequester(requesterId);
    }

    /**
     * Reclaiming pool allocations (Saves, tier fetches) that failed since the last one that succeeded: positive while
     * the pool is pinned by holders eviction cannot touch (leases, transfer locks, loads in flight), for health.
     */
    public long allocationFailuresSinceSuccess() {
        return reclaimer.failuresSinceSuccess();
    }

    /** The transfer-lock table's counters, for metrics and the admin view. */
    public TransferLockTable.Stats transferLockStats() {
        return transferLocks.stats();
    }

    /** UnregisterContext by a caller of this process. */
    public void unregister(String instanceId) {
        unregister(instanceId, Principal.inProcess());
    }

    /**
     * UnregisterContext: drops the instance, its device contexts (after draining) and its leases, when it belongs to
     * {@code caller}.
     *
     * @throws EngineException PERMISSION_DENIED for another principal's instance (nothing is dropped)
     */
    public void unregister(String instanceId, Principal caller) {
        authorize(instanceId, caller);
        if (teardown.end(instanceId, true) < 0) {
            throw EngineException.instanceMissing(instanceId);
        }
    }

    /** A Session opened by a caller of this process. */
    public long openSession(String instanceId, String namespace, long tpSize, long worldSize) {
        return openSession(instanceId, namespace, tpSize, worldSize, Principal.inProcess());
    }

    /**
     * Installs the Session of an instance, replacing a previous one of the same principal; returns its token.
     *
     * @throws EngineException PERMISSION_DENIED when another principal registered the instance or holds its live
     *     Session: its cancel would tear down an instance that is not the caller's
     */
    public long openSession(String instanceId, String namespace, long tpSize, long worldSize, Principal caller) {
        if (instanceId.isEmpty()) {
            throw EngineException.badRequest("instance_id must not be empty");
        }
        InstanceLimits.requireName("instance_id", instanceId);
        InstanceLimits.requireName("namespace", namespace);
        instances.requireOwnerOrAbsent(instanceId, caller);
        side.requireOwnerOrAbsent(instanceId, caller);
        long token = sessions.open(instanceId, namespace, tpSize, worldSize, caller);
        if (detached.remove(instanceId)) {
            LOG.info("restored instance {} adopted by a new Session", instanceId);
        }
        return token;
    }

    /**
     * Ends a Session; tears the instance down when the token is still the current one. After
     * {@link #retainRegistrations()} the instance's end is not journaled.
     */
    public void closeSession(String instanceId, long token) {
        if (sessions.close(instanceId, token)) {
            int removed = teardown.end(instanceId, !retaining);
            // A worker that exits normally unregisters before its Session ends, so "nothing left" is the usual case.
            if (removed < 0) {
                LOG.info(
                        "session of {} ended; nothing to remove (its instance had unregistered, or never registered)",
                        instanceId);
            } else {
                LOG.info("session of {} ended; its instance was removed with it", instanceId);
            }
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
    public @Nullable CleanupResult cleanupInstances(@Nullable String instanceId) {
        return teardown.cleanup(instanceId);
    }

    /**
     * Sweeps expired leases, breaks every transfer lock and drains the whole RAM index. Breaking the locks is ours: the
     * reference's cleanup left locked blocks pinned, so a peer holding locks defeated the operator's only way to
     * reclaim the pool.
     */
    public MemoryCleanupResult cleanupMemory() {
        leases.sweep();
        int brokenLocks = transferLocks.breakAll();
        EvictedBlocks evicted = cache.evictAll();
        long evictedBytes = evicted.footprintBytes();
        long still = evicted.stillReferenced();
        long count = evicted.count();
        long reclaimed = count == 0 ? 0 : reclaimer.drop(evicted);
        return new MemoryCleanupResult(count, evictedBytes, reclaimed, still, brokenLocks);
    }

    /** Sweeps expired leases and collects stale in-flight blocks and prefetch tasks. Driven by a timer. */
    public void runMaintenance() {
        leases.sweep();
        transferLocks.sweep();
        teardown.endIdleDetached();
        long maxAge = config.inflightMaxAge().toNanos();
        prefetch.collect(maxAge);
        try {
            sealer.gc(maxAge).get(sealer.deadlineNanos(), TimeUnit.NANOSECONDS);
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

    @Override
    public void forEachResident(int batchSize, BlockIndexListener sink) {
        cache.forEachKeyBatch(
                batchSize, batch -> IndexAnnouncements.byNamespace(batch).forEach(sink::onSealed));
    }

    // ---------------------------------------------------------------- views for metrics and the admin surface

    /** The engine's counters, read-only (the meter binder and the admin API read the same view). */
    public EngineMetricsView metrics() {
        return metrics;
    }

    /**
     * Installs the recorders of the Save and Load durations (the server binds them to its histograms before
     * traffic starts); {@code null} restores the no-op recorder.
     */
    public void bindDurations(DurationRecorder save, DurationRecorder load) {
        metrics.bindSaveDuration(save);
        metrics.bindLoadDuration(load);
    }

    /**
     * The per-phase recorders of Save: the engine records its phases, the gRPC layer the transport's (receive, parse,
     * decode, reply); the server binds them to its meters before traffic starts.
     */
    public PhaseRecorders<SavePhase> savePhases() {
        return metrics.savePhases();
    }

    /** The per-phase recorders of Load, as {@link #savePhases()}. */
    public PhaseRecorders<LoadPhase> loadPhases() {
        return metrics.loadPhases();
    }

    /**
     * Pool memory for bytes that pass through this node without entering the cache (push staging), reclaimed from the
     * cache exactly as a Save's memory is.
     */
    public StagingAllocator staging() {
        return staging;
    }

    /**
     * Registrations of worker layers beside the cache (the P/D push), under this engine's owner rule, mapping budget and
     * instance lifecycle.
     */
    public SideRegistrations sideRegistrations() {
        return side;
    }

    /** The pool, read-only: memory is taken through {@link #staging()} and the data paths, never from here. */
    public PoolView pool() {
        return pool;
    }

    /** After a Save's blocks entered the RAM tier: evict ahead to keep {@code pega.pool.headroom} free (if set). */
    private void keepHeadroom() {
        reclaimer.keepHeadroom();
    }

    /** Blocks the RAM tier's policy evicted while inserting: announced, counted and released like a reclaim batch. */
    private void dropPolicyEvictions(EvictedBlocks evicted) {
        reclaimer.drop(evicted);
    }

    /** The RAM cache, read-only. */
    public CacheView cache() {
        return cache;
    }

    /** The cache itself, for tests of this package that drive eviction. */
    BlockCache blockCache() {
        return cache;
    }

    public int activeLeases() {
        return leases.size();
    }

    /**
     * From now on a Session that ends leaves its instance in the journal. The server calls it when it begins to shut
     * down: stopping the gRPC server cancels every Session stream, and those ends say nothing about the workers,
     * which live on and are restored by the next start. Unregister still ends an instance for good.
     */
    public void retainRegistrations() {
        retaining = true;
    }

    /** Instances, Sessions, leases and the restore at start, as the operator sees them (the admin surface). */
    public EngineStatus status() {
        return status;
    }

    /** The limits in force ({@code pega.limits.*}). */
    public EngineLimits limits() {
        return limits;
    }

    /** Device contexts registered over all instances (each runs {@link EngineLimits#LANES_PER_DEVICE} lanes). */
    public int deviceCount() {
        return budget.devices();
    }

    /** Layer mappings held over all instances. */
    public long mappedObjectCount() {
        return budget.mappedObjects();
    }

    public String backendName() {
        return backend.name();
    }

    /**
     * Device work for layers mapped beside the cache (the P/D push): their mappings through this engine's backend and
     * their copies on this engine's lanes of each device, under its device and lane-thread limits.
     */
    public DeviceWorkers workers() {
        return workers;
    }

    /** The configuration as concluded: the host alignment is the one in force (512 with the SSD tier). */
    public EngineConfig config() {
        return config;
    }

    /** The backing tiers' names, in fetch order (empty without tiers). */
    public List<String> tierNames() {
        return tiers.names();
    }

    // ---------------------------------------------------------------- internals

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
            teardown.end(id, false); // the journal keeps them: the workers outlive this process
        }
        workers.close(); // drains the push lanes while the pool and the backend are still there
        maintenance.close();
        agents.remove(maintenance);
        prefetch.collect(0); // any task left over: its blocks go back when its fetch completes, below at the latest
        sealer.close(); // no more spills or announcements after this
        tiers.close(); // last first; each waits for its I/O in progress, while the pool is still mapped
        leases.clear();
        transferLocks.clear();
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
