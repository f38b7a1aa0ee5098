package io.pegaflow.metaserver.config;

import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code pega.metaserver.*}: the reference's command-line flags as properties plus the limits and persistence settings
 * of this implementation. Validated when bound; a bad value stops startup with "name: value (expected: ...)".
 *
 * @param addr gRPC bind address {@code host:port} (reference {@code --addr}); use {@code 0.0.0.0:50056} in clusters
 * @param httpAddr HTTP bind address for health, metrics and the node list (reference {@code --http-addr})
 * @param nodeStaleSecs seconds after a node's last heartbeat or write when its blocks stop being returned; also
 *     sent to clients, which heartbeat at half of it (reference {@code --node-stale-secs}, 0 allowed)
 * @param ttlMinutes minutes after which block records and silent nodes are purged (reference {@code --ttl-minutes})
 * @param sweepIntervalSecs seconds between TTL sweeps (reference {@code --sweep-interval-secs})
 * @param dbPath file path (without {@code .mv.db}) of the embedded H2 database holding node sessions and fences
 * @param maxBlocks upper bound on indexed keys; beyond it the least valuable keys are evicted (about 200 bytes of
 *     heap per key with one owner, so the default needs roughly 1 GiB)
 * @param nodeShare the fraction of {@code maxBlocks} one node may own: past it, the node's own oldest records are
 *     removed, so no node's inserts evict another node's keys
 * @param maxHashesPerRequest largest hash list accepted by one Insert, Remove or Query (the reference has none; a
 *     4 MiB gRPC message holds about 100k 32-byte hashes)
 * @param maxHashBytes longest single block hash accepted
 * @param maxNamespaceChars longest namespace accepted
 * @param fenceRetentionHours hours a superseded node_id stays fenced before its record is purged
 * @param nodeRefreshSecs seconds between re-reads of node sessions from the database, so that replicas sharing one
 *     PostgreSQL database see each other's takeovers (and the Redis index's epoch is checked); 0 disables it
 * @param index where the block-owner index lives: {@code memory} (this process, rebuilt by re-announcement) or
 *     {@code redis} (shared by every instance, survives their restarts; decision 0032)
 * @param redis the Redis deployment of {@code index=redis}
 * @param calls the workers that run gRPC calls, and when a call that waited too long for one is shed
 */
// An unknown key under the prefix fails startup (MetaserverFailureAnalyzer names the key it resembles).
@ConfigurationProperties(prefix = "pega.metaserver", ignoreUnknownFields = false)
public record MetaserverProperties(
        @DefaultValue("127.0.0.1:50056") String addr,
        @DefaultValue("0.0.0.0:9092") String httpAddr,
        @DefaultValue("30") long nodeStaleSecs,
        @DefaultValue("120") long ttlMinutes,
        @DefaultValue("600") long sweepIntervalSecs,
        @DefaultValue("./pega-metaserver-data/metaserver") String dbPath,
        @DefaultValue("4000000") long maxBlocks,
        @DefaultValue("65536") int maxHashesPerRequest,
        @DefaultValue("256") int maxHashBytes,
        @DefaultValue("1024") int maxNamespaceChars,
        @DefaultValue("168") long fenceRetentionHours,
        @DefaultValue("10") long nodeRefreshSecs,
        @DefaultValue("0.25") double nodeShare,
        @DefaultValue("memory") String index,
        @DefaultValue Redis redis,
        @DefaultValue Calls calls) {

    /** The index backends {@code pega.metaserver.index} accepts. */
    public static final List<String> INDEX_BACKENDS = List.of("memory", "redis");

    /**
     * {@code pega.metaserver.redis.*}.
     *
     * @param uri the single Redis server ({@code redis://[:password@]host:port[/db]}, {@code rediss://} for TLS),
     *     used when {@code cluster-uris} is empty
     * @param clusterUris seed nodes of a Redis Cluster; when set, {@code uri} is ignored
     * @param timeoutMs deadline of every Redis command
     */
    public record Redis(
            @DefaultValue("redis://127.0.0.1:6379") String uri,
            @DefaultValue List<String> clusterUris,
            @DefaultValue("2000") long timeoutMs) {

        public Redis {
            require(timeoutMs > 0, "redis.timeout-ms", timeoutMs, "> 0");
        }
    }

    /**
     * {@code pega.metaserver.calls.*}: the fixed sets of worker agents that run the gRPC calls instead of gRPC's
     * unbounded default pool, and the shedding of calls that waited too long for one.
     *
     * @param workers workers of the index calls (Insert, Remove, QueryPrefix); 0 means two per core, at least four
     * @param dbWorkers workers of HeartbeatNode and UnregisterNode, which write the database; 0 means the connection
     *     pool's size
     * @param queue tasks that may wait for each set of workers; past it the transport thread runs the task itself
     * @param maxQueueWaitMs a call that waited longer than this for a worker ends {@code RESOURCE_EXHAUSTED} unrun
     */
    public record Calls(
            @DefaultValue("0") int workers,
            @DefaultValue("0") int dbWorkers,
            @DefaultValue("4096") int queue,
            @DefaultValue("500") long maxQueueWaitMs) {

        public Calls {
            require(workers >= 0, "calls.workers", workers, ">= 0");
            require(dbWorkers >= 0, "calls.db-workers", dbWorkers, ">= 0");
            require(queue > 0, "calls.queue", queue, "> 0");
            require(maxQueueWaitMs > 0, "calls.max-queue-wait-ms", maxQueueWaitMs, "> 0");
        }

        /** The index calls' workers in force on a machine of {@code cores} cores. */
        public int workersFor(int cores) {
            return workers > 0 ? workers : Math.max(4, 2 * cores);
        }

        /** The database calls' workers in force with a connection pool of {@code poolSize}. */
        public int dbWorkersFor(int poolSize) {
            return dbWorkers > 0 ? dbWorkers : Math.max(1, poolSize);
        }
    }

    /** Largest TTL that still fits a millisecond count (the reference rejects {@code ttl*60} overflow). */
    private static final long MAX_TTL_MINUTES = Long.MAX_VALUE / 60_000L;

    public MetaserverProperties {
        require(nodeStaleSecs >= 0, "node-stale-secs", nodeStaleSecs, ">= 0");
        require(ttlMinutes > 0, "ttl-minutes", ttlMinutes, "> 0");
        require(ttlMinutes <= MAX_TTL_MINUTES, "ttl-minutes", ttlMinutes, "<= " + MAX_TTL_MINUTES);
        require(
                nodeStaleSecs <= ttlMinutes * 60,
                "ttl-minutes",
                ttlMinutes,
                "ttl-minutes * 60 >= node-stale-secs (" + nodeStaleSecs + ")");
        require(sweepIntervalSecs > 0, "sweep-interval-secs", sweepIntervalSecs, "> 0");
        require(maxBlocks > 0, "max-blocks", maxBlocks, "> 0");
        require(nodeShare > 0 && nodeShare <= 1, "node-share", nodeShare, "> 0 and <= 1");
        require(maxHashesPerRequest > 0, "max-hashes-per-request", maxHashesPerRequest, "> 0");
        require(maxHashBytes > 0, "max-hash-bytes", maxHashBytes, "> 0");
        require(maxNamespaceChars > 0, "max-namespace-chars", maxNamespaceChars, "> 0");
        require(fenceRetentionHours > 0, "fence-retention-hours", fenceRetentionHours, "> 0");
        require(nodeRefreshSecs >= 0, "node-refresh-secs", nodeRefreshSecs, ">= 0");
        require(INDEX_BACKENDS.contains(index), "index", index, String.join(" or ", INDEX_BACKENDS));
    }

    private static void require(boolean ok, String name, Object value, String expected) {
        if (!ok) {
            throw new IllegalArgumentException(
                    "pega.metaserver." + name + ": " + value + " (expected: " + expected + ")");
        }
    }

    /** The records one node may own: its share of {@code maxBlocks}, at least one. */
    public long maxBlocksPerNode() {
        return Math.max(1, (long) Math.floor(maxBlocks * nodeShare));
    }

    public long staleAfterMs() {
        return nodeStaleSecs * 1000L;
    }

    public long ttlMs() {
        return ttlMinutes * 60_000L;
    }

    public long sweepIntervalMs() {
        return sweepIntervalSecs * 1000L;
    }

    public long fenceRetentionMs() {
        return fenceRetentionHours * 3_600_000L;
    }

    public long nodeRefreshMs() {
        return nodeRefreshSecs * 1000L;
    }
}
