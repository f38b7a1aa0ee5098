package io.pegaflow.server.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.metrics.EngineMetrics;
import io.pegaflow.core.ssd.ShardStatus;
import io.pegaflow.core.ssd.SsdErrorKind;
import io.pegaflow.core.ssd.SsdMetrics;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.server.internode.MetaserverClient;
import io.pegaflow.server.internode.MetaserverClientStats;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
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
            bindDataPath(meters, e.metrics());
        });
        ssd.ifPresent(store -> {
            bindSsdShards(meters, store);
            bindSsdStore(meters, store.metrics());
        });
        metaserverClient.ifPresent(stats -> bindMetaserverClient(meters, stats));
    }

    private static void bindPoolAndCache(CatalogMeters m, PegaEngine engine) {
        EngineMetrics c = engine.metrics();
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
        count(m, ServerMetric.PEGAFLOW_POOL_ALLOC_FAILURES, c.poolAllocFailures);
        m.gauge(
                ServerMetric.PEGAFLOW_CACHE_RESIDENT_BYTES,
                engine,
                e -> e.cache().residentBytes());
        m.gauge(
                ServerMetric.PEGAFLOW_CACHE_RESIDENT_BLOCKS,
                engine,
                e -> e.cache().size());
        count(m, ServerMetric.PEGAFLOW_CACHE_BLOCK_HITS, c.cacheBlockHits);
        count(m, ServerMetric.PEGAFLOW_CACHE_BLOCK_MISSES, c.cacheBlockMisses);
        for (String tier : new TreeSet<>(c.tierNames())) {
            m.countOf(ServerMetric.PEGAFLOW_CACHE_TIER_BLOCK_REQUESTS, c, counts -> counts.tierRequests(tier), tier);
        }
        count(m, ServerMetric.PEGAFLOW_CACHE_BLOCK_INSERTIONS, c.cacheInsertions);
        count(m, ServerMetric.PEGAFLOW_CACHE_BLOCK_ADMISSION_REJECTIONS, c.cacheAdmissionRejections);
        count(m, ServerMetric.PEGAFLOW_CACHE_BLOCK_EVICTIONS, c.cacheEvictions);
        count(m, ServerMetric.PEGAFLOW_CACHE_BLOCK_EVICTIONS_STILL_REFERENCED, c.cacheEvictionsStillReferenced);
        count(m, ServerMetric.PEGAFLOW_CACHE_EVICTION_RECLAIMED_BYTES, c.cacheEvictionReclaimedBytes);
        level(m, ServerMetric.PEGAFLOW_INFLIGHT_BYTES, c.inflightBytes);
        count(m, ServerMetric.PEGAFLOW_INFLIGHT_GC_CLEANED, c.inflightGcCleaned);
        count(m, ServerMetric.PEGAFLOW_SEAL_DUPLICATES_DROPPED, c.sealDuplicatesDropped);
        m.gauge(ServerMetric.PEGAFLOW_LEASES_ACTIVE, engine, PegaEngine::activeLeases);
        m.gauge(ServerMetric.PEGAFLOW_INSTANCES, engine, PegaEngine::instanceCount);
        m.gauge(ServerMetric.PEGAFLOW_SESSIONS, engine, PegaEngine::sessionCount);
    }

    private static void bindDataPath(CatalogMeters m, EngineMetrics c) {
        count(m, ServerMetric.PEGAFLOW_SAVE_BYTES, c.saveBytes);
        count(m, ServerMetric.PEGAFLOW_LOAD_BYTES, c.loadBytes);
        count(m, ServerMetric.PEGAFLOW_LOAD_FAILURES, c.loadFailures);
        Timer save = m.timer(ServerMetric.PEGAFLOW_SAVE_DURATION);
        Timer load = m.timer(ServerMetric.PEGAFLOW_LOAD_DURATION);
        c.bindSaveDuration(nanos -> save.record(nanos, TimeUnit.NANOSECONDS));
        c.bindLoadDuration(nanos -> load.record(nanos, TimeUnit.NANOSECONDS));
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

    private static void bindSsdStore(CatalogMeters m, SsdMetrics c) {
        count(m, ServerMetric.PEGAFLOW_SSD_WRITE_BLOCKS, c.writeBlocks);
        count(m, ServerMetric.PEGAFLOW_SSD_WRITE_BYTES, c.writeBytes);
        count(m, ServerMetric.PEGAFLOW_SSD_WRITE_FAILURES, c.writeFailures);
        count(m, ServerMetric.PEGAFLOW_SSD_WRITE_QUEUE_FULL, c.writeQueueFull);
        count(m, ServerMetric.PEGAFLOW_SSD_WRITE_SKIPPED_FREED, c.writeSkippedFreed);
        count(m, ServerMetric.PEGAFLOW_SSD_WRITE_OVERWRITTEN, c.writeOverwritten);
        level(m, ServerMetric.PEGAFLOW_SSD_WRITE_QUEUE_PENDING, c.writeQueuePending);
        level(m, ServerMetric.PEGAFLOW_SSD_WRITE_INFLIGHT, c.writeInflight);
        count(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_SUCCESS, c.prefetchBlocks);
        count(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_BYTES, c.prefetchBytes);
        count(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_FAILURES, c.prefetchFailures);
        count(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_QUEUE_FULL, c.prefetchQueueFull);
        count(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_BACKPRESSURE_BLOCKS, c.prefetchBackpressureBlocks);
        level(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_QUEUE_PENDING, c.prefetchQueuePending);
        level(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_INFLIGHT, c.prefetchInflight);
        level(m, ServerMetric.PEGAFLOW_SSD_PREFETCH_RESERVED_BLOCKS, c.prefetchReserved);
        count(m, ServerMetric.PEGAFLOW_SSD_RECOVERED_ENTRIES, c.recoveredEntries);
        count(m, ServerMetric.PEGAFLOW_SSD_RECOVERY_DROPPED_ENTRIES, c.recoveryDroppedEntries);
        for (SsdErrorKind kind : SsdErrorKind.values()) {
            count(m, ServerMetric.PEGAFLOW_SSD_ERRORS, c.errorCounter(kind), kind.label());
        }
        Timer prefetch = m.timer(ServerMetric.PEGAFLOW_SSD_PREFETCH_DURATION);
        c.bindPrefetchDuration(nanos -> prefetch.record(nanos, TimeUnit.NANOSECONDS));
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
    }

    /** A core counter, read at scrape time (the core's adders are the core engineer's to replace with views). */
    private static void count(CatalogMeters m, ServerMetric metric, LongAdder adder, String... labels) {
        m.countOf(metric, adder, LongAdder::sum, labels);
    }

    private static void level(CatalogMeters m, ServerMetric metric, AtomicLong value) {
        m.gauge(metric, value, AtomicLong::get);
    }
}
