package io.pegaflow.server.ssd;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pegaflow.core.ssd.ShardStatus;
import io.pegaflow.core.ssd.SsdErrorKind;
import io.pegaflow.core.ssd.SsdMetrics;
import io.pegaflow.core.ssd.SsdStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;

/**
 * Exports the SSD tier's counters (catalogue in {@code docs/ssd.md}): per shard used, capacity, entries, health and
 * bytes moved; queue depths and in-flight I/O; errors by kind; the prefetch-duration histogram. Hits by tier
 * ({@code pegaflow_cache_tier_block_requests{tier=ram|ssd|miss}}) come from the engine's binder.
 */
public class SsdMeterBinder implements MeterBinder {
    private static final Duration[] PREFETCH_BUCKETS = {
        Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5), Duration.ofMillis(10),
        Duration.ofMillis(20), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(200),
        Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(5)
    };

    private final SsdStore store;

    public SsdMeterBinder(SsdStore store) {
        this.store = store;
    }

    @Override
    public void bindTo(MeterRegistry r) {
        for (ShardStatus s : store.shardStatus()) {
            int id = s.id();
            Tags tags = Tags.of("shard", Integer.toString(id), "path", s.path());
            shardGauge(
                    r,
                    "pegaflow_ssd_shard_used_bytes",
                    "Bytes of the entries a shard serves",
                    tags,
                    id,
                    x -> x.usedBytes());
            shardGauge(
                    r, "pegaflow_ssd_shard_capacity_bytes", "Ring bytes of a shard", tags, id, x -> x.capacityBytes());
            shardGauge(r, "pegaflow_ssd_shard_entries", "Entries a shard serves", tags, id, x -> x.entries());
            shardGauge(
                    r,
                    "pegaflow_ssd_shard_healthy",
                    "1 while a shard is in service",
                    tags,
                    id,
                    x -> x.healthy() ? 1 : 0);
            FunctionCounter.builder(
                            "pegaflow_ssd_shard_written_bytes",
                            store,
                            st -> shard(st, id).bytesWritten())
                    .description("Bytes written to a shard")
                    .tags(tags)
                    .register(r);
            FunctionCounter.builder(
                            "pegaflow_ssd_shard_read_bytes",
                            store,
                            st -> shard(st, id).bytesRead())
                    .description("Payload bytes read from a shard")
                    .tags(tags)
                    .register(r);
        }
        SsdMetrics m = store.metrics();
        counter(r, "pegaflow_ssd_write_blocks", "Blocks written to SSD", m.writeBlocks);
        counter(r, "pegaflow_ssd_write_bytes", "Bytes written to SSD, headers included", m.writeBytes);
        counter(r, "pegaflow_ssd_write_failures", "Block writes that failed", m.writeFailures);
        counter(r, "pegaflow_ssd_write_queue_full", "Blocks dropped on a full write queue", m.writeQueueFull);
        counter(r, "pegaflow_ssd_write_skipped_freed", "Queued blocks freed before their write", m.writeSkippedFreed);
        counter(r, "pegaflow_ssd_write_overwritten", "Writes the ring overtook before commit", m.writeOverwritten);
        counter(r, "pegaflow_ssd_prefetch_success", "Blocks read back from SSD", m.prefetchBlocks);
        counter(r, "pegaflow_ssd_prefetch_bytes", "Payload bytes read back from SSD", m.prefetchBytes);
        counter(r, "pegaflow_ssd_prefetch_failures", "Block reads that failed", m.prefetchFailures);
        counter(r, "pegaflow_ssd_prefetch_queue_full", "Blocks not read on a full prefetch queue", m.prefetchQueueFull);
        counter(
                r,
                "pegaflow_ssd_prefetch_backpressure_blocks",
                "Blocks not read because max-prefetch-blocks were in flight",
                m.prefetchBackpressureBlocks);
        counter(r, "pegaflow_ssd_recovered_entries", "Entries restored from the shards at start", m.recoveredEntries);
        counter(
                r,
                "pegaflow_ssd_recovery_dropped_entries",
                "Torn, corrupt or overwritten entries dropped at start",
                m.recoveryDroppedEntries);
        gauge(r, "pegaflow_ssd_write_queue_pending", "Blocks waiting in the write queue", m.writeQueuePending);
        gauge(r, "pegaflow_ssd_write_inflight", "Block writes in progress", m.writeInflight);
        gauge(r, "pegaflow_ssd_prefetch_queue_pending", "Blocks waiting in the prefetch queue", m.prefetchQueuePending);
        gauge(r, "pegaflow_ssd_prefetch_inflight", "Block reads in progress", m.prefetchInflight);
        gauge(
                r,
                "pegaflow_ssd_prefetch_reserved_blocks",
                "Blocks reserved against max-prefetch-blocks",
                m.prefetchReserved);
        for (SsdErrorKind kind : SsdErrorKind.values()) {
            FunctionCounter.builder("pegaflow_ssd_errors", m.errorCounter(kind), LongAdder::sum)
                    .description("SSD errors by kind")
                    .tag("kind", kind.label())
                    .register(r);
        }
        Timer prefetch = Timer.builder("pegaflow_ssd_prefetch_duration")
                .description("SSD prefetch, request to verified blocks")
                .serviceLevelObjectives(PREFETCH_BUCKETS)
                .register(r);
        m.bindPrefetchDuration(nanos -> prefetch.record(nanos, TimeUnit.NANOSECONDS));
    }

    private static ShardStatus shard(SsdStore store, int id) {
        return store.shardStatus().get(id);
    }

    private void shardGauge(
            MeterRegistry r, String name, String help, Tags tags, int id, ToDoubleFunction<ShardStatus> value) {
        Gauge.builder(name, store, st -> value.applyAsDouble(shard(st, id)))
                .description(help)
                .tags(tags)
                .register(r);
    }

    private static void counter(MeterRegistry r, String name, String help, LongAdder adder) {
        FunctionCounter.builder(name, adder, LongAdder::sum).description(help).register(r);
    }

    private static void gauge(MeterRegistry r, String name, String help, AtomicLong value) {
        Gauge.builder(name, value, AtomicLong::get).description(help).register(r);
    }
}
