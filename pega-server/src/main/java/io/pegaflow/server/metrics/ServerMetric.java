package io.pegaflow.server.metrics;

import io.pegaflow.edge.metrics.MetricDescriptor;
import io.pegaflow.edge.metrics.MetricType;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The server's metric catalog: every meter it exports, with its type, unit, labels and help. The meter name is the
 * constant's name in lower case, the reference's {@code pegaflow_*} name where one exists, so its dashboards keep
 * working. {@link ServerMeterBinder} registers the whole catalog (the RPC entries are registered by the edge's
 * interceptor as calls arrive), and {@code docs/metrics.md} lists exactly these entries ({@code MetricsDocsTest}).
 */
public enum ServerMetric implements MetricDescriptor {
    // RPCs
    PEGAFLOW_RPC_REQUESTS(MetricType.COUNTER, "requests", "Engine RPCs by method and status", Labels.RPC),
    PEGAFLOW_RPC_DURATION(
            MetricType.TIMER, "seconds", "Engine RPC latency by method and status", Labels.RPC, Buckets.RPC),

    // The gRPC listener (decision 0031 §4)
    PEGAFLOW_GRPC_CONNECTIONS(MetricType.GAUGE, "connections", "gRPC connections open (pega.grpc.max-connections)"),
    PEGAFLOW_GRPC_CONNECTIONS_REFUSED(
            MetricType.COUNTER,
            "connections",
            "gRPC connections closed at accept: pega.grpc.max-connections were open"),

    // Connectors (docs/compatibility.md)
    PEGAFLOW_CONNECTOR_REGISTRATIONS(
            MetricType.COUNTER,
            "registrations",
            "RegisterContextBatch calls accepted, by connector generation",
            Labels.GENERATION),

    // Pool, cache, leases
    PEGAFLOW_POOL_CAPACITY_BYTES(MetricType.GAUGE, "bytes", "Allocatable pinned pool bytes"),
    PEGAFLOW_POOL_USED_BYTES(MetricType.GAUGE, "bytes", "Pinned pool bytes allocated"),
    PEGAFLOW_POOL_LARGEST_FREE_BYTES(MetricType.GAUGE, "bytes", "Largest free pool region (lower bound)"),
    PEGAFLOW_POOL_OUTSTANDING_ALLOCATIONS(MetricType.GAUGE, "allocations", "Pool allocations not yet released"),
    PEGAFLOW_POOL_ALLOC_FAILURES(MetricType.COUNTER, "allocations", "Allocations that failed after reclaim"),
    PEGAFLOW_CACHE_RESIDENT_BYTES(MetricType.GAUGE, "bytes", "Footprint of blocks in the RAM index"),
    PEGAFLOW_CACHE_RESIDENT_BLOCKS(MetricType.GAUGE, "blocks", "Blocks in the RAM index"),
    PEGAFLOW_CACHE_BLOCK_HITS(MetricType.COUNTER, "blocks", "Blocks returned by queries"),
    PEGAFLOW_CACHE_BLOCK_MISSES(MetricType.COUNTER, "blocks", "Requested blocks not returned"),
    PEGAFLOW_CACHE_TIER_BLOCK_REQUESTS(
            MetricType.COUNTER, "blocks", "Requested blocks by the tier that answered them", Labels.TIER),
    PEGAFLOW_CACHE_BLOCK_INSERTIONS(MetricType.COUNTER, "blocks", "Blocks inserted into the RAM index"),
    PEGAFLOW_CACHE_BLOCK_ADMISSION_REJECTIONS(MetricType.COUNTER, "blocks", "Blocks refused by admission"),
    PEGAFLOW_CACHE_BLOCK_EVICTIONS(MetricType.COUNTER, "blocks", "Blocks evicted"),
    PEGAFLOW_CACHE_BLOCK_EVICTIONS_AHEAD(
            MetricType.COUNTER, "blocks", "Blocks evicted after a sealed Save to keep the pool's headroom free"),
    PEGAFLOW_CACHE_BLOCK_EVICTIONS_STILL_REFERENCED(
            MetricType.COUNTER, "blocks", "Evicted blocks still held elsewhere"),
    PEGAFLOW_CACHE_EVICTION_RECLAIMED_BYTES(MetricType.COUNTER, "bytes", "Pinned bytes freed by eviction"),
    PEGAFLOW_INFLIGHT_BYTES(MetricType.GAUGE, "bytes", "Bytes of blocks still waiting for slots"),
    PEGAFLOW_INFLIGHT_GC_CLEANED(MetricType.COUNTER, "blocks", "Incomplete blocks dropped by age"),
    PEGAFLOW_SEAL_DUPLICATES_DROPPED(MetricType.COUNTER, "blocks", "Late duplicate saves of resident blocks dropped"),
    PEGAFLOW_LEASES_ACTIVE(MetricType.GAUGE, "leases", "Live query leases"),
    PEGAFLOW_INSTANCES(MetricType.GAUGE, "instances", "Registered instances"),
    PEGAFLOW_SESSIONS(MetricType.GAUGE, "sessions", "Open scheduler sessions"),

    // Restart (docs/operations.md "Restarting the server"), with pega.state.dir
    PEGAFLOW_RESTORE_DURATION_SECONDS(
            MetricType.GAUGE, "seconds", "Time the start took to re-open the journaled registrations"),
    PEGAFLOW_RESTORED_INSTANCES(MetricType.GAUGE, "instances", "Instances restored from the journal at start"),
    PEGAFLOW_RESTORE_DROPPED_INSTANCES(
            MetricType.GAUGE, "instances", "Journaled instances dropped at start because their memory was gone"),
    PEGAFLOW_DETACHED_INSTANCES(MetricType.GAUGE, "instances", "Restored instances that no Session has adopted"),

    // Data path
    PEGAFLOW_SAVE_BYTES(MetricType.COUNTER, "bytes", "Padded bytes saved"),
    PEGAFLOW_SAVE_DURATION(
            MetricType.TIMER, "seconds", "Whole Save call, validation to copy completion", Labels.NONE, Buckets.COPY),
    PEGAFLOW_LOAD_BYTES(MetricType.COUNTER, "bytes", "Bytes loaded to devices"),
    PEGAFLOW_LOAD_DURATION(
            MetricType.TIMER, "seconds", "Load copy, task start to completion", Labels.NONE, Buckets.COPY),
    PEGAFLOW_LOAD_FAILURES(MetricType.COUNTER, "loads", "Loads that signalled failure"),
    PEGAFLOW_SAVE_PHASE(
            MetricType.TIMER, "seconds", "Save time by phase, receive to reply", Labels.PHASE, Buckets.PHASE),
    PEGAFLOW_LOAD_PHASE(
            MetricType.TIMER, "seconds", "Load time by phase, receive to signal", Labels.PHASE, Buckets.PHASE),

    // SSD tier, per shard (docs/ssd.md)
    PEGAFLOW_SSD_SHARD_USED_BYTES(MetricType.GAUGE, "bytes", "Bytes of the entries a shard serves", Labels.SHARD),
    PEGAFLOW_SSD_SHARD_CAPACITY_BYTES(MetricType.GAUGE, "bytes", "Ring bytes of a shard", Labels.SHARD),
    PEGAFLOW_SSD_SHARD_ENTRIES(MetricType.GAUGE, "entries", "Entries a shard serves", Labels.SHARD),
    PEGAFLOW_SSD_SHARD_HEALTHY(MetricType.GAUGE, "boolean", "1 while a shard is in service", Labels.SHARD),
    PEGAFLOW_SSD_SHARD_WRITTEN_BYTES(MetricType.COUNTER, "bytes", "Bytes written to a shard", Labels.SHARD),
    PEGAFLOW_SSD_SHARD_READ_BYTES(MetricType.COUNTER, "bytes", "Payload bytes read from a shard", Labels.SHARD),

    // SSD tier, whole store
    PEGAFLOW_SSD_WRITE_BLOCKS(MetricType.COUNTER, "blocks", "Blocks written to SSD"),
    PEGAFLOW_SSD_WRITE_BYTES(MetricType.COUNTER, "bytes", "Bytes written to SSD, headers included"),
    PEGAFLOW_SSD_WRITE_FAILURES(MetricType.COUNTER, "blocks", "Block writes that failed"),
    PEGAFLOW_SSD_WRITE_QUEUE_FULL(MetricType.COUNTER, "blocks", "Blocks dropped on a full write queue"),
    PEGAFLOW_SSD_WRITE_SKIPPED_FREED(MetricType.COUNTER, "blocks", "Queued blocks freed before their write"),
    PEGAFLOW_SSD_WRITE_OVERWRITTEN(MetricType.COUNTER, "blocks", "Writes the ring overtook before commit"),
    PEGAFLOW_SSD_WRITE_QUEUE_PENDING(MetricType.GAUGE, "blocks", "Blocks waiting in the write queue"),
    PEGAFLOW_SSD_WRITE_INFLIGHT(MetricType.GAUGE, "blocks", "Block writes in progress"),
    PEGAFLOW_SSD_PREFETCH_SUCCESS(MetricType.COUNTER, "blocks", "Blocks read back from SSD"),
    PEGAFLOW_SSD_PREFETCH_BYTES(MetricType.COUNTER, "bytes", "Payload bytes read back from SSD"),
    PEGAFLOW_SSD_PREFETCH_FAILURES(MetricType.COUNTER, "blocks", "Block reads that failed"),
    PEGAFLOW_SSD_PREFETCH_QUEUE_FULL(MetricType.COUNTER, "blocks", "Blocks not read on a full prefetch queue"),
    PEGAFLOW_SSD_PREFETCH_BACKPRESSURE_BLOCKS(
            MetricType.COUNTER, "blocks", "Blocks not read because max-prefetch-blocks were in flight"),
    PEGAFLOW_SSD_PREFETCH_QUEUE_PENDING(MetricType.GAUGE, "blocks", "Blocks waiting in the prefetch queue"),
    PEGAFLOW_SSD_PREFETCH_INFLIGHT(MetricType.GAUGE, "blocks", "Block reads in progress"),
    PEGAFLOW_SSD_PREFETCH_RESERVED_BLOCKS(MetricType.GAUGE, "blocks", "Blocks reserved against max-prefetch-blocks"),
    PEGAFLOW_SSD_PREFETCH_DURATION(
            MetricType.TIMER, "seconds", "SSD prefetch, request to verified blocks", Labels.NONE, Buckets.PREFETCH),
    PEGAFLOW_SSD_ERRORS(MetricType.COUNTER, "errors", "SSD errors by kind", Labels.KIND),
    PEGAFLOW_SSD_RECOVERED_ENTRIES(MetricType.COUNTER, "entries", "Entries restored from the shards at start"),
    PEGAFLOW_SSD_RECOVERY_DROPPED_ENTRIES(
            MetricType.COUNTER, "entries", "Torn, corrupt or overwritten entries dropped at start"),

    // Metaserver client
    PEGAFLOW_METASERVER_REGISTRATION_BLOCKS(
            MetricType.COUNTER, "hashes", "Sealed block hashes queued for the metaserver"),
    PEGAFLOW_METASERVER_REGISTRATION_FAILURES(MetricType.COUNTER, "hashes", "Block hashes whose Insert was dropped"),
    PEGAFLOW_METASERVER_REGISTRATION_QUEUE_FULL(
            MetricType.COUNTER, "hashes", "Sealed block hashes dropped on a full queue"),
    PEGAFLOW_METASERVER_REMOVAL_BLOCKS(MetricType.COUNTER, "hashes", "Evicted block hashes queued for the metaserver"),
    PEGAFLOW_METASERVER_REMOVAL_FAILURES(MetricType.COUNTER, "hashes", "Block hashes whose Remove was dropped"),
    PEGAFLOW_METASERVER_REMOVAL_QUEUE_FULL(
            MetricType.COUNTER, "hashes", "Evicted block hashes dropped on a full queue"),
    PEGAFLOW_METASERVER_HEARTBEAT_FAILURES(MetricType.COUNTER, "calls", "Failed heartbeats"),
    PEGAFLOW_METASERVER_SESSION_RESETS(
            MetricType.COUNTER, "events", "Sessions refused by the metaserver (unknown or stale)"),
    PEGAFLOW_METASERVER_UNREGISTER_FAILURES(MetricType.COUNTER, "calls", "Failed UnregisterNode calls at shutdown"),
    PEGAFLOW_METASERVER_REANNOUNCEMENTS(
            MetricType.COUNTER, "events", "Re-announcements of all resident blocks after an epoch change"),
    PEGAFLOW_METASERVER_REANNOUNCED_BLOCKS(MetricType.COUNTER, "hashes", "Block hashes sent by re-announcements"),
    PEGAFLOW_METASERVER_FAILOVERS(
            MetricType.COUNTER, "events", "Moves to the next metaserver address after one became unreachable"),

    // P/D push (docs/pd-push.md), when pega.pd.enabled
    PEGAFLOW_PD_PUSHES_IN_FLIGHT(MetricType.GAUGE, "requests", "Prefill-side pushes in flight"),
    PEGAFLOW_PD_RECEIVES_IN_FLIGHT(MetricType.GAUGE, "requests", "Decode-side receives in flight"),
    PEGAFLOW_PD_PUSHED_BYTES(MetricType.COUNTER, "bytes", "Bytes put to decode servers"),
    PEGAFLOW_PD_RECEIVED_BYTES(MetricType.COUNTER, "bytes", "Bytes copied to decode workers' devices"),
    PEGAFLOW_PD_PUSH_FAILURES(MetricType.COUNTER, "requests", "Pushes that ended in push state -1"),
    PEGAFLOW_PD_RECEIVE_FAILURES(MetricType.COUNTER, "requests", "Receives that ended in load_state -1"),
    PEGAFLOW_PD_LAYER_LAG(
            MetricType.TIMER,
            "seconds",
            "Per layer, ready seen to arrival acknowledged by the decode server",
            Labels.NONE,
            Buckets.PREFETCH),
    PEGAFLOW_PD_RPC_REQUESTS(MetricType.COUNTER, "requests", "P/D push RPCs by method and status", Labels.RPC),
    PEGAFLOW_PD_RPC_DURATION(
            MetricType.TIMER, "seconds", "P/D push RPC latency by method and status", Labels.RPC, Buckets.RPC),

    // Cross-node transfers (docs/transfer.md), when pega.rdma.enabled
    PEGAFLOW_TRANSFER_PEERS(MetricType.GAUGE, "peers", "Peers with an established transfer connection"),
    PEGAFLOW_TRANSFER_OPS_IN_FLIGHT(MetricType.GAUGE, "operations", "Transfer operations submitted, not completed"),
    PEGAFLOW_TRANSFER_PEER_CONNECTIONS(
            MetricType.GAUGE, "connections", "Connections (lanes) to a peer by state", Labels.PEER_STATE),
    PEGAFLOW_TRANSFER_PEER_OPS_IN_FLIGHT(
            MetricType.GAUGE, "operations", "Transfer operations in flight to a peer", Labels.PEER),
    PEGAFLOW_TRANSFER_PEER_BYTES(
            MetricType.COUNTER, "bytes", "Bytes moved with a peer by direction", Labels.PEER_DIRECTION),
    PEGAFLOW_TRANSFER_PEER_ERRORS(MetricType.COUNTER, "batches", "Failed transfer batches to a peer", Labels.PEER),
    PEGAFLOW_TRANSFER_PEER_LATENCY_P50_SECONDS(
            MetricType.GAUGE, "seconds", "Median transfer batch latency to a peer", Labels.PEER),
    PEGAFLOW_TRANSFER_PEER_LATENCY_P99_SECONDS(
            MetricType.GAUGE, "seconds", "99th percentile transfer batch latency to a peer", Labels.PEER),
    PEGAFLOW_TRANSFER_LOCK_ACTIVE(MetricType.GAUGE, "blocks", "Blocks held by transfer lock sessions"),
    PEGAFLOW_TRANSFER_LOCK_SESSIONS(MetricType.GAUGE, "sessions", "Open transfer lock sessions"),
    PEGAFLOW_TRANSFER_LOCK_TIMEOUTS(MetricType.COUNTER, "sessions", "Transfer lock sessions that expired unreleased"),
    PEGAFLOW_TRANSFER_LOCK_BYTES(MetricType.GAUGE, "bytes", "Pool bytes held by transfer lock sessions"),
    PEGAFLOW_TRANSFER_LOCK_REFUSALS(
            MetricType.COUNTER, "requests", "Transfer locks refused because they would pass a locked-bytes bound"),
    PEGAFLOW_TRANSFER_LOCK_BROKEN(
            MetricType.COUNTER, "sessions", "Transfer lock sessions ended by the operator's memory cleanup"),
    PEGAFLOW_RDMA_FETCH(MetricType.COUNTER, "fetches", "Remote fetch attempts by outcome", Labels.STATUS),
    PEGAFLOW_RDMA_FETCH_DURATION(
            MetricType.TIMER, "seconds", "Remote fetch that supplied every block asked", Labels.NONE, Buckets.FETCH),
    PEGAFLOW_RDMA_FETCH_BYTES(MetricType.COUNTER, "bytes", "Bytes fetched from peers"),
    PEGAFLOW_RDMA_FETCH_FAILURES(
            MetricType.COUNTER, "fetches", "Remote fetches that supplied less than asked, by cause", Labels.KIND);

    /** Label sets used by the catalog. */
    private static final class Labels {
        static final List<String> NONE = List.of();
        static final List<String> RPC = List.of("method", "status");
        static final List<String> TIER = List.of("tier");
        static final List<String> GENERATION = List.of("generation");
        static final List<String> SHARD = List.of("shard", "path");
        static final List<String> KIND = List.of("kind");
        static final List<String> PHASE = List.of("phase");
        static final List<String> STATUS = List.of("status");
        static final List<String> PEER = List.of("peer");
        static final List<String> PEER_STATE = List.of("peer", "state");
        static final List<String> PEER_DIRECTION = List.of("peer", "direction");
    }

    /** Histogram buckets, as the reference's exporter has them. */
    private static final class Buckets {
        static final List<Duration> NONE = List.of();
        static final List<Duration> RPC = List.of(
                Duration.ofNanos(500_000),
                Duration.ofMillis(1),
                Duration.ofMillis(2),
                Duration.ofMillis(5),
                Duration.ofMillis(10),
                Duration.ofMillis(20),
                Duration.ofMillis(50),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofMillis(500),
                Duration.ofSeconds(1),
                Duration.ofSeconds(2));
        static final List<Duration> COPY = List.of(
                Duration.ofMillis(10),
                Duration.ofMillis(25),
                Duration.ofMillis(50),
                Duration.ofMillis(100),
                Duration.ofMillis(250),
                Duration.ofMillis(500),
                Duration.ofSeconds(1),
                Duration.ofMillis(1500),
                Duration.ofSeconds(2),
                Duration.ofSeconds(3),
                Duration.ofSeconds(5),
                Duration.ofMillis(7500),
                Duration.ofSeconds(10),
                Duration.ofSeconds(15),
                Duration.ofSeconds(30),
                Duration.ofSeconds(60));
        /** Request phases: from tens of microseconds (a lookup) to the copy of a large request. */
        static final List<Duration> PHASE = List.of(
                Duration.ofNanos(50_000),
                Duration.ofNanos(200_000),
                Duration.ofMillis(1),
                Duration.ofMillis(2),
                Duration.ofMillis(5),
                Duration.ofMillis(10),
                Duration.ofMillis(20),
                Duration.ofMillis(50),
                Duration.ofMillis(100),
                Duration.ofMillis(250),
                Duration.ofSeconds(1));
        /** The reference's {@code pegaflow_rdma_fetch_duration} buckets. */
        static final List<Duration> FETCH = List.of(
                Duration.ofMillis(10),
                Duration.ofMillis(20),
                Duration.ofMillis(50),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofMillis(500),
                Duration.ofSeconds(1),
                Duration.ofSeconds(2));

        static final List<Duration> PREFETCH = List.of(
                Duration.ofMillis(1),
                Duration.ofMillis(2),
                Duration.ofMillis(5),
                Duration.ofMillis(10),
                Duration.ofMillis(20),
                Duration.ofMillis(50),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofMillis(500),
                Duration.ofSeconds(1),
                Duration.ofSeconds(2),
                Duration.ofSeconds(5));
    }

    private final MetricType type;
    private final String unit;
    private final String help;

    @SuppressWarnings("ImmutableEnumChecker") // always one of the List.of(...) constants above: unmodifiable
    private final List<String> labels;

    @SuppressWarnings("ImmutableEnumChecker") // always one of the List.of(...) constants above: unmodifiable
    private final List<Duration> buckets;

    ServerMetric(MetricType type, String unit, String help) {
        this(type, unit, help, Labels.NONE, Buckets.NONE);
    }

    ServerMetric(MetricType type, String unit, String help, List<String> labels) {
        this(type, unit, help, labels, Buckets.NONE);
    }

    ServerMetric(MetricType type, String unit, String help, List<String> labels, List<Duration> buckets) {
        this.type = type;
        this.unit = unit;
        this.help = help;
        this.labels = labels;
        this.buckets = buckets;
    }

    @Override
    public String meterName() {
        return name().toLowerCase(Locale.ROOT);
    }

    @Override
    public MetricType type() {
        return type;
    }

    @Override
    public String unit() {
        return unit;
    }

    @Override
    public List<String> labels() {
        return labels;
    }

    @Override
    public String help() {
        return help;
    }

    @Override
    public List<Duration> buckets() {
        return buckets;
    }
}
