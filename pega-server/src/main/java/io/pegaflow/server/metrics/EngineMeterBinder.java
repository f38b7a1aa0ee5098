package io.pegaflow.server.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.metrics.EngineMetrics;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.springframework.stereotype.Component;

/**
 * Exports the engine's counters and gauges under the reference's Prometheus names (spec/storage.md §7). The core
 * counts in plain adders; this binder only reads them at scrape time. Catalogue: {@code docs/metrics.md}.
 */
@Component
public class EngineMeterBinder implements MeterBinder {
    private static final Duration[] COPY_BUCKETS = {
        Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100),
        Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(1500),
        Duration.ofSeconds(2), Duration.ofSeconds(3), Duration.ofSeconds(5), Duration.ofMillis(7500),
        Duration.ofSeconds(10), Duration.ofSeconds(15), Duration.ofSeconds(30), Duration.ofSeconds(60)
    };

    private final PegaEngine engine;

    public EngineMeterBinder(PegaEngine engine) {
        this.engine = engine;
    }

    @Override
    public void bindTo(MeterRegistry r) {
        EngineMetrics m = engine.metrics();
        gauge(
                r,
                "pegaflow_pool_capacity_bytes",
                "Allocatable pinned pool bytes",
                () -> engine.pool().capacityBytes());
        gauge(
                r,
                "pegaflow_pool_used_bytes",
                "Pinned pool bytes allocated",
                () -> engine.pool().usedBytes());
        gauge(
                r,
                "pegaflow_pool_largest_free_bytes",
                "Largest free pool region (lower bound)",
                () -> engine.pool().largestFreeBytes());
        gauge(
                r,
                "pegaflow_pool_outstanding_allocations",
                "Pool allocations not yet released",
                () -> engine.pool().outstandingAllocations());
        gauge(
                r,
                "pegaflow_cache_resident_bytes",
                "Footprint of blocks in the RAM index",
                () -> engine.cache().residentBytes());
        gauge(
                r,
                "pegaflow_cache_resident_blocks",
                "Blocks in the RAM index",
                () -> engine.cache().size());
        gauge(r, "pegaflow_inflight_bytes", "Bytes of blocks still waiting for slots", m.inflightBytes::get);
        gauge(r, "pegaflow_leases_active", "Live query leases", engine::activeLeases);
        gauge(r, "pegaflow_instances", "Registered instances", engine::instanceCount);
        gauge(r, "pegaflow_sessions", "Open scheduler sessions", engine::sessionCount);

        counter(r, "pegaflow_pool_alloc_failures", "Allocations that failed after reclaim", m.poolAllocFailures);
        counter(r, "pegaflow_inflight_gc_cleaned", "Incomplete blocks dropped by age", m.inflightGcCleaned);
        counter(r, "pegaflow_cache_block_hits", "Blocks returned by queries", m.cacheBlockHits);
        counter(r, "pegaflow_cache_block_misses", "Requested blocks not returned", m.cacheBlockMisses);
        counter(r, "pegaflow_cache_block_insertions", "Blocks inserted into the RAM index", m.cacheInsertions);
        counter(
                r,
                "pegaflow_cache_block_admission_rejections",
                "Blocks refused by admission",
                m.cacheAdmissionRejections);
        counter(r, "pegaflow_cache_block_evictions", "Blocks evicted", m.cacheEvictions);
        counter(
                r,
                "pegaflow_cache_block_evictions_still_referenced",
                "Evicted blocks still held elsewhere",
                m.cacheEvictionsStillReferenced);
        counter(
                r,
                "pegaflow_cache_eviction_reclaimed_bytes",
                "Pinned bytes freed by eviction",
                m.cacheEvictionReclaimedBytes);
        counter(r, "pegaflow_save_bytes", "Padded bytes saved", m.saveBytes);
        counter(r, "pegaflow_load_bytes", "Bytes loaded to devices", m.loadBytes);
        counter(r, "pegaflow_load_failures", "Loads that signalled failure", m.loadFailures);
        counter(
                r,
                "pegaflow_seal_duplicates_dropped",
                "Late duplicate saves of resident blocks dropped",
                m.sealDuplicatesDropped);
        for (String tier : new String[] {"ram", "ssd", "rdma", "miss"}) {
            tier(r, tier, m);
        }

        Timer save = Timer.builder("pegaflow_save_duration")
                .description("Whole Save call, validation to copy completion")
                .serviceLevelObjectives(COPY_BUCKETS)
                .register(r);
        Timer load = Timer.builder("pegaflow_load_duration")
                .description("Load copy, task start to completion")
                .serviceLevelObjectives(COPY_BUCKETS)
                .register(r);
        m.bindSaveDuration(nanos -> save.record(nanos, TimeUnit.NANOSECONDS));
        m.bindLoadDuration(nanos -> load.record(nanos, TimeUnit.NANOSECONDS));
    }

    private static void gauge(MeterRegistry r, String name, String help, java.util.function.Supplier<Number> value) {
        Gauge.builder(name, value).description(help).register(r);
    }

    private static void counter(MeterRegistry r, String name, String help, LongAdder adder) {
        FunctionCounter.builder(name, adder, LongAdder::sum).description(help).register(r);
    }

    private static void tier(MeterRegistry r, String tier, EngineMetrics m) {
        FunctionCounter.builder("pegaflow_cache_tier_block_requests", m, metrics -> metrics.tierRequests(tier))
                .description("Requested blocks by the tier that answered them")
                .tag("tier", tier)
                .register(r);
    }
}
