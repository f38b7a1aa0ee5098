package io.pegaflow.server.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pegaflow.core.engine.EngineStatus;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.metrics.DurationRecorder;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.core.metrics.EngineMetricsView;
import io.pegaflow.core.ssd.ShardStatus;
import io.pegaflow.core.ssd.SsdCounter;
import io.pegaflow.core.ssd.SsdErrorKind;
import io.pegaflow.core.ssd.SsdGauge;
import io.pegaflow.core.ssd.SsdMetricsView;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.server.internode.MetaserverClient;
import io.pegaflow.server.internode.MetaserverClientStats;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * The server's one binder: registers every {@link ServerMetric} of the subsystems this process runs (the engine
 * always, the SSD tier and the metaserver client when configured), reading the subsystems' counters at scrape time;
 * the RPC entries are the edge's interceptor's. Meters can only be built from catalog entries ({@link CatalogMeters}).
 */
public final class ServerMeterBinder implements MeterBinder {

    private final Optional<PegaEngine> engine;
    private final Optional<SsdStore> ssd;
    private final Optional<MetaserverClientStats> metaserverClient;

    public ServerMeterBinder(
            Optional<PegaEngine> engine, Optional<SsdStore> ssd, Optional<MetaserverClient> metaserverClient) {
        this.engine = engine;
        this.ssd = ssd;
        this.metaserverClient = metaserverClient.map(MetaserverClient::stats);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        CatalogMeters meters = new CatalogMeters(registry);
        engine.ifPresent(e -> {
            bindPoolAndCache(meters, e);
            bindDataPath(meters, e);
            bindRestore(meters, e);
        });
        ssd.ifPresent(store -> {
            bindSsdShards(meters, store);
            bindSsdStore(meters, store);
        });
        metaserverClient.ifPresent(stats -> bindMetaserverClient(meters, stats));
    }

    private static void bindPoolAndCache(CatalogMeters m, PegaEngine engine) {
        EngineMetricsView c = engine.metrics();
        m.gauge(ServerMetric.PEGAFLOW_POOL_CAPACITY_BYTES, engine, e -> e.pool().capacityBytes());
        m.gauge(ServerMetric.PEGAFLOW_POOL_USED_BYTES, engine, e -> e.pool().usedBytes());
        m.gauge(
                ServerMetric.PEGAFLOW_POOL_LARGEST_FREE_BYTES,
                engine,
                e -> e.pool().largestFreeBytes());
        m.gauge(
                ServerMetric.PEGAFLOW_POOL_OUTSTANDING_ALLOCATIONS,
                engine,
                e -> e.pool().outstandingAllocations());
        count(m, ServerMetric.PEGAFLOW_POOL_ALLOC_FAILURES, c, EngineCounter.POOL_ALLOC_FAILURES);
        m.gauge(
                ServerMetric.PEGAFLOW_CACHE_RESIDENT_BYTES,
                engine,
                e -> e.cache().residentBytes());
        m.gauge(
                ServerMetric.PEGAFLOW_CACHE_RESIDENT_BLOCKS,
                engine,
                e -> e.cache().size());
        count(m, ServerMetric.PEGAFLOW_CACHE_BLOCK_HITS, c, EngineCounter.CACHE_BLOCK_HITS);
        count(m, ServerMetric.PEGAFLOW_CACHE_BLOCK_MISSES, c, EngineCounter.CACHE_BLOCK_MISSES);
        for (String tier : new TreeSet<>(c.tierNames())) {
            m.countOf(ServerMetric.PEGAFLOW_CACHE_TIER_BLOCK_REQUESTS, c, counts -> counts.tierRequests(tier), tier);
        }
        count(m, ServerMetric.PEGAFLOW_CACHE_BLOCK_INSERTIONS, c, EngineCounter.CACHE_INSERTIONS);
        count(m, ServerMetric.PEGAFLOW_CACHE_BLOCK_ADMISSION_REJECTIONS, c, EngineCounter.CACHE_ADMISSION_REJECTIONS);
        count(m, ServerMetric.PEGAFLOW_CACHE_BLOCK_EVICTIONS, c, EngineCounter.CACHE_EVICTIONS);
        count(m, ServerMetric.PEGAFLOW_CACHE_BLOCK_EVICTIONS_AHEAD, c, EngineCounter.CACHE_EVICTIONS_AHEAD);
        count(
                m,
                ServerMetric.PEGAFLOW_CACHE_BLOCK_EVICTIONS_STILL_REFERENCED,
                c,
                EngineCounter.CACHE_EVICTIONS_STILL_REFERENCED);
        count(m, ServerMetric.PEGAFLOW_CACHE_EVICTION_RECLAIMED_BYTES, c, EngineCounter.CACHE_EVICTION_RECLAIMED_BYTES);
        m.gauge(ServerMetric.PEGAFLOW_INFLIGHT_BYTES, c, EngineMetricsView::inflightBytes);
        count(m, ServerMetric.PEGAFLOW_INFLIGHT_GC_CLEANED, c, EngineCounter.INFLIGHT_GC_CLEANED);
        count(m, ServerMetric.PEGAFLOW_SEAL_DUPLICATES_DROPPED, c, EngineCounter.SEAL_DUPLICATES_DROPPED);
        m.gauge(ServerMetric.PEGAFLOW_LEASES_ACTIVE, engine, PegaEngine::activeLeases);
        m.gauge(ServerMetric.PEGAFLOW_INSTANCES, engine.status(), EngineStatus::instanceCount);
        m.gauge(ServerMetric.PEGAFLOW_SESSIONS, engine.status(), EngineStatus::sessionCount);
    }

    private static void bindDataPath(CatalogMeters m, PegaEngine engine) {
        EngineMetricsView c = engine.metrics();
        count(m, ServerMetric.PEGAFLOW_SAVE_BYTES, c, EngineCounter.SAVE_BYTES);
        count(m, ServerMetric.PEGAFLOW_LOAD_BYTES, c, EngineCounter.LOAD_BYTES);
        count(m, ServerMetric.PEGAFLOW_LOAD_FAILURES, c, EngineCounter.LOAD_FAILURES);
        Timer save = m.timer(ServerMetric.PEGAFLOW_SAVE_DURATION);
        Timer load = m.timer(ServerMetric.PEGAFLOW_LOAD_DURATION);
        engine.bindDurations(
                nanos -> save.record(nanos, TimeUnit.NANOSECONDS), nanos -> load.record(nanos, TimeUnit.NANOSECONDS));
        engine.savePhases().bind(phase -> recorder(m.timer(ServerMetric.PEGAFLOW_SAVE_PHASE, phase.label())));
        engine.loadPhases().bind(phase -> recorder(m.timer(ServerMetric.PEGAFLOW_LOAD_PHASE, phase.label())));
    }

    private static DurationRecorder recorder(Timer timer) {
        return nanos -> timer.record(nanos, TimeUnit.NANOSECONDS);
    }

    /** Read at scrape time: the restore runs after the binder, just before the gRPC port opens. */
    private static void bindRestore(CatalogMeters m, PegaEngine engine) {
        m.gauge(
                ServerMetric.PEGAFLOW_RESTORE_DURATION_SECONDS,
                engine,
                e -> e.status().lastRestore().nanos() / 1e9);
        m.gauge(
                ServerMetric.PEGAFLOW_RESTORED_INSTANCES,
                engine,
                e -> e.status().lastRestore().restored().size());
        m.gauge(
                ServerMetric.PEGAFLOW_RESTORE_DROPPED_INSTANCES,
                engine,
                e -> e.status().lastRestore().dropped().size());
        m.gauge(ServerMetric.PEGAFLOW_DETACHED_INSTANCES, engine.status(), EngineStatus::detachedCount);
    }

    private static void bindSsdShards(CatalogMeters m, SsdStore store) {
        for (ShardStatus s : store.shardStatus()) {
            int id = s.id();
            String shard = Integer.toString(id);
            String path = s.path();
            m.gauge(ServerMetric.PEGAFLOW_SSD_SHARD_USED_BYTES, store, shard(id, ShardStatus::usedBytes), shard, path);
            m.gauge(
                    ServerMetric.PEGAFLOW_SSD_SHARD_CAPACITY_BYTES,
                    store,
                    shard(id, ShardStatus::capacityBytes),
                    shard,
                    path);
            m.gauge(ServerMetric.PEGAFLOW_SSD_SHARD_ENTRIES, store, shard(id, ShardStatus::entries), shard, path);
            m.gauge(ServerMetric.PEGAFLOW_SSD_SHARD_HEALTHY, store, shard(id, x -> x.healthy() ? 1 : 0), shard, path);
            m.countOf(
                    ServerMetric.PEGAFLOW_SSD_SHARD_WRITTEN_BYTES,
                    store,
                    shard(id, ShardStatus::bytesWritten),
                    shard,
                    path);
            m.countOf(
                    ServerMetric.PEGAFLOW_SSD_SHARD_READ_BYTES, store, shard(id, ShardStatus::bytesRead), shard, path);
        }
    }

    private static ToDoubleFunction<SsdStore> shard(int id, ToDoubleFunction<ShardStatus> value) {
        return store -> value.applyAsDouble(store.shardStatus().get(id));
    }

    private static void bindSsdStore(CatalogMeters m, SsdStore store) {
        SsdMetricsView c = store.metrics();
        count(m, ServerMetric.PEGAFLOW_SSD_WRITE_BLOCKS, c, SsdCounter.WRITE_BLOCKS);
        count(m, ServerMetric.PEGAFLOW_SSD_WRITE_BYTES, c, SsdCounter.WRITE_BYTES);
        count(m, ServerMetric.PEGAFLOW_SSD_WRITE_FAILURES, c, SsdCounter.WRITE_FAILURES);
        count(m, ServerMetric.PEGAFLOW_SSD_WRITE_QUEUE_FULL, c, SsdCounter.WRITE_QUEUE_FULL);
        count(m, ServerMetric.PEGAFLOW_SSD_WRITE_SKIPPED_FREED, c, SsdCounter.WRITE_SKIPPED_FREED);
        count(m, ServerMetric.PEGAFLOW_SSD_WRITE_OVERWRITTEN, c, SsdCounter.WRITE_OVERWRITTEN);
        level(m, ServerMetric.PEGAFLOW_SSD_WRITE_QUEUE_PENDING, c, SsdGauge.WRITE_QUEUE_PENDING);
        level(m, ServerMetric.PEGAFLOW_SSD_WRITE_INFLIGHT, c, SsdGauge.WRITE_INFLIGHT);
        count(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_SUCCESS, c, SsdCounter.PREFETCH_BLOCKS);
        count(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_BYTES, c, SsdCounter.PREFETCH_BYTES);
        count(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_FAILURES, c, SsdCounter.PREFETCH_FAILURES);
        count(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_QUEUE_FULL, c, SsdCounter.PREFETCH_QUEUE_FULL);
        count(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_BACKPRESSURE_BLOCKS, c, SsdCounter.PREFETCH_BACKPRESSURE_BLOCKS);
        level(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_QUEUE_PENDING, c, SsdGauge.PREFETCH_QUEUE_PENDING);
        level(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_INFLIGHT, c, SsdGauge.PREFETCH_INFLIGHT);
        level(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_RESERVED_BLOCKS, c, SsdGauge.PREFETCH_RESERVED);
        count(m, ServerMetric.PEGAFLOW_SSD_RECOVERED_ENTRIES, c, SsdCounter.RECOVERED_ENTRIES);
        count(m, ServerMetric.PEGAFLOW_SSD_RECOVERY_DROPPED_ENTRIES, c, SsdCounter.RECOVERY_DROPPED_ENTRIES);
        for (SsdErrorKind kind : SsdErrorKind.values()) {
            m.countOf(ServerMetric.PEGAFLOW_SSD_ERRORS, c, view -> view.errors(kind), kind.label());
        }
        Timer prefetch = m.timer(ServerMetric.PEGAFLOW_SSD_PREFETCH_DURATION);
        store.bindPrefetchDuration(nanos -> prefetch.record(nanos, TimeUnit.NANOSECONDS));
    }

    private static void bindMetaserverClient(CatalogMeters m, MetaserverClientStats s) {
        m.countOf(ServerMetric.PEGAFLOW_METASERVER_REGISTRATION_BLOCKS, s, MetaserverClientStats::registrationBlocks);
        m.countOf(
                ServerMetric.PEGAFLOW_METASERVER_REGISTRATION_FAILURES, s, MetaserverClientStats::registrationFailures);
        m.countOf(
                ServerMetric.PEGAFLOW_METASERVER_REGISTRATION_QUEUE_FULL,
                s,
                MetaserverClientStats::registrationQueueFull);
        m.countOf(ServerMetric.PEGAFLOW_METASERVER_REMOVAL_BLOCKS, s, MetaserverClientStats::removalBlocks);
        m.countOf(ServerMetric.PEGAFLOW_METASERVER_REMOVAL_FAILURES, s, MetaserverClientStats::removalFailures);
        m.countOf(ServerMetric.PEGAFLOW_METASERVER_REMOVAL_QUEUE_FULL, s, MetaserverClientStats::removalQueueFull);
        m.countOf(ServerMetric.PEGAFLOW_METASERVER_HEARTBEAT_FAILURES, s, MetaserverClientStats::heartbeatFailures);
        m.countOf(ServerMetric.PEGAFLOW_METASERVER_SESSION_RESETS, s, MetaserverClientStats::sessionResets);
        m.countOf(ServerMetric.PEGAFLOW_METASERVER_UNREGISTER_FAILURES, s, MetaserverClientStats::unregisterFailures);
        m.countOf(ServerMetric.PEGAFLOW_METASERVER_REANNOUNCEMENTS, s, MetaserverClientStats::reannouncements);
        m.countOf(ServerMetric.PEGAFLOW_METASERVER_REANNOUNCED_BLOCKS, s, MetaserverClientStats::reannouncedBlocks);
        m.countOf(ServerMetric.PEGAFLOW_METASERVER_FAILOVERS, s, MetaserverClientStats::failovers);
    }

    /** An engine counter, read through the engine's view at scrape time (as the admin API reads it). */
    private static void count(CatalogMeters m, ServerMetric metric, EngineMetricsView view, EngineCounter counter) {
        m.countOf(metric, view, v -> v.count(counter));
    }

    /** An SSD counter, read through the tier's view at scrape time. */
    private static void count(CatalogMeters m, ServerMetric metric, SsdMetricsView view, SsdCounter counter) {
        m.countOf(metric, view, v -> v.count(counter));
    }

    /** An SSD level, read through the tier's view at scrape time. */
    private static void level(CatalogMeters m, ServerMetric metric, SsdMetricsView view, SsdGauge gauge) {
        m.gauge(metric, view, v -> v.gauge(gauge));
    }
}
