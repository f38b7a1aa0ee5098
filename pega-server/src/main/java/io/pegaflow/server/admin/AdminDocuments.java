package io.pegaflow.server.admin;

import io.pegaflow.core.engine.InstanceSummary;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.annotation.JsonNaming;

/**
 * The JSON documents of the admin API (docs/admin-api.md), snake_case on the wire like the reference's operations
 * endpoints. Durations are milliseconds, sizes bytes, rates per second; the page formats them.
 */
final class AdminDocuments {
    private AdminDocuments() {}

    /** {@code GET /api/admin/info}: which app this is and which subsystems run, so the page shows the right tabs. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Info(
            String app, String version, String backend, long nowMs, long refreshMs, Map<String, Boolean> subsystems) {}

    /** {@code GET /api/admin/overview}. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Overview(
            long nowMs,
            Pool pool,
            Cache cache,
            Map<String, Long> tiers,
            Rates rates,
            int leasesActive,
            int instances,
            int sessions,
            int detachedInstances,
            List<ThroughputHistory.Sample> history,
            long historyIntervalMs) {}

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Pool(
            long capacityBytes,
            long usedBytes,
            long largestFreeBytes,
            int outstandingAllocations,
            long allocFailures) {}

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Cache(
            long residentBlocks,
            long residentBytes,
            long inflightBytes,
            long insertions,
            long admissionRejections,
            long evictions,
            long hits,
            long misses) {}

    /**
     * Over the last sampling interval.
     *
     * @param hitRatio each tier's share of the blocks requested in the interval; empty when none was requested
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Rates(
            long windowMs,
            double saveBytesPerSec,
            double loadBytesPerSec,
            double ssdReadBytesPerSec,
            double ssdWriteBytesPerSec,
            Map<String, Double> hitRatio) {}

    /** {@code GET /api/admin/instances}. */
    record Instances(List<Instance> instances) {}

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Instance(
            String id,
            String namespace,
            int tpSize,
            int worldSize,
            int numLayers,
            int leases,
            boolean detached,
            List<Device> devices,
            String clientVersion,
            String generation,
            boolean sealed,
            List<Integer> groupLayers,
            boolean hybrid) {
        static Instance of(InstanceSummary s) {
            return new Instance(
                    s.id(),
                    s.namespace(),
                    s.tpSize(),
                    s.worldSize(),
                    s.numLayers(),
                    s.leases(),
                    s.detached(),
                    s.devices().stream()
                            .map(d -> new Device(
                                    d.deviceId(),
                                    d.tpRank(),
                                    d.ppRank(),
                                    d.layers(),
                                    d.layout(),
                                    d.numBlocks(),
                                    d.bytesPerBlock()))
                            .toList(),
                    s.clientVersion(),
                    s.generation(),
                    s.sealed(),
                    s.groupLayers(),
                    s.hybrid());
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Device(
            int deviceId, int tpRank, int ppRank, int layers, String layout, long numBlocks, long bytesPerBlock) {}

    /** {@code GET /api/admin/leases}. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Leases(long nowMs, long ttlMs, int active, long blocksHeld, List<Lease> leases) {}

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Lease(String idPrefix, String instanceId, int blocks, int consumersLeft, long expiresInMs) {}

    /** {@code GET /api/admin/ssd}; only {@code configured} and {@code message} when the tier is off. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Ssd(
            boolean configured,
            @Nullable String message,
            @Nullable Boolean healthy,
            @Nullable List<Shard> shards,
            @Nullable Map<String, Long> writes,
            @Nullable Map<String, Long> reads,
            @Nullable Map<String, Long> errors,
            @Nullable Rates rates) {
        static Ssd off() {
            return new Ssd(false, "SSD tier not configured", null, null, null, null, null, null);
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Shard(
            int id,
            String path,
            boolean healthy,
            @Nullable String failureKind,
            String failureDetail,
            long usedBytes,
            long capacityBytes,
            long entries,
            long bytesWritten,
            long bytesRead) {}

    /** {@code GET /api/admin/transfer}; only {@code configured} and {@code message} without a transfer engine. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Transfer(
            boolean configured,
            @Nullable String message,
            @Nullable String fabric,
            @Nullable List<String> nics,
            @Nullable String transports,
            @Nullable Integer lanes,
            @Nullable Integer registeredRegions,
            @Nullable Long registeredBytes,
            @Nullable Long inFlightOps,
            @Nullable List<Peer> peers,
            @Nullable PoolMemory poolMemory) {
        static Transfer off() {
            return new Transfer(
                    false, "transfer engine not configured", null, null, null, null, null, null, null, null, null);
        }
    }

    /**
     * Where the pool's shards live (decision 0019): {@code ucx} when a UCX context allocated them (in shared memory a
     * peer on this host attaches, where {@code shared_shards} says so), {@code private} when the pool mapped them
     * itself (peers on this host then read them through UCX's emulation, as over TCP).
     *
     * @param enginesOnContext transfer engines running on the allocating context now (the push engine's included)
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record PoolMemory(String allocatedBy, int shards, int sharedShards, int enginesOnContext) {}

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Peer(
            String peer,
            String state,
            List<Connection> connections,
            long connects,
            long drops,
            long inFlightOps,
            long batches,
            long opsCompleted,
            long opsFailed,
            long bytesRead,
            long bytesWritten,
            Map<String, Long> errors,
            String lastError,
            long latencyP50Micros,
            long latencyP99Micros,
            long latencyMaxMicros) {}

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Connection(int index, String state, long inFlightOps, long opsIssued) {}

    /** {@code GET /api/admin/metaserver}; only {@code configured} and {@code message} without pega.metaserver.addr. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Metaserver(
            boolean configured,
            @Nullable String message,
            @Nullable String target,
            @Nullable String advertiseAddr,
            @Nullable String link,
            @Nullable Long epoch,
            @Nullable String lastFailure,
            @Nullable Map<String, Long> counters) {
        static Metaserver off() {
            return new Metaserver(false, "metaserver not configured", null, null, null, null, null, null);
        }
    }

    /** {@code GET /api/admin/access}: whether this caller's mutations would pass the admin rule, and how to enable. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Access(boolean permitted, boolean tokenConfigured, boolean loopbackListener, String howToEnable) {}
}
