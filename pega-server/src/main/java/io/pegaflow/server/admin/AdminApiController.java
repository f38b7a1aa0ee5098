package io.pegaflow.server.admin;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.lease.LeaseSummary;
import io.pegaflow.core.memory.PoolView;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.core.metrics.EngineMetricsView;
import io.pegaflow.core.ssd.ShardStatus;
import io.pegaflow.core.ssd.SsdCounter;
import io.pegaflow.core.ssd.SsdErrorKind;
import io.pegaflow.core.ssd.SsdGauge;
import io.pegaflow.core.ssd.SsdMetricsView;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.edge.access.AdminAccess;
import io.pegaflow.edge.access.AdmissionValve;
import io.pegaflow.edge.access.SocketPeerValve;
import io.pegaflow.node.PegaNode;
import io.pegaflow.server.admin.AdminDocuments.Access;
import io.pegaflow.server.admin.AdminDocuments.Cache;
import io.pegaflow.server.admin.AdminDocuments.Connection;
import io.pegaflow.server.admin.AdminDocuments.Info;
import io.pegaflow.server.admin.AdminDocuments.Instances;
import io.pegaflow.server.admin.AdminDocuments.Lease;
import io.pegaflow.server.admin.AdminDocuments.Leases;
import io.pegaflow.server.admin.AdminDocuments.Metaserver;
import io.pegaflow.server.admin.AdminDocuments.Overview;
import io.pegaflow.server.admin.AdminDocuments.Peer;
import io.pegaflow.server.admin.AdminDocuments.Pool;
import io.pegaflow.server.admin.AdminDocuments.PoolMemory;
import io.pegaflow.server.admin.AdminDocuments.Rates;
import io.pegaflow.server.admin.AdminDocuments.Shard;
import io.pegaflow.server.admin.AdminDocuments.Ssd;
import io.pegaflow.server.admin.AdminDocuments.Transfer;
import io.pegaflow.server.internode.MetaserverClient;
import io.pegaflow.server.internode.MetaserverClientStats;
import io.pegaflow.transfer.PeerView;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferView;
import io.pegaflow.transfer.ucx.UcxSharedMemory;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.info.BuildProperties;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /api/admin/*} (docs/admin-api.md): what the dashboard shows, each document built at call time from the
 * read-only views of the engine, the SSD tier, the transfer engine and the metaserver client. A subsystem this process
 * does not run answers {@code configured: false} with the sentence the page shows. Reads are open like
 * {@code /instances} and {@code /metrics}; {@code /api/admin/access} tells the page whether its actions would pass.
 */
@RestController
@RequestMapping(path = "/api/admin", produces = MediaType.APPLICATION_JSON_VALUE)
class AdminApiController {
    static final long REFRESH_MS = 2000;

    private final PegaEngine engine;
    private final ObjectProvider<SsdStore> ssd;
    private final ObjectProvider<TransferEngine> transfer;
    private final PegaNode node;
    private final ObjectProvider<MetaserverClient> metaserver;
    private final ObjectProvider<BuildProperties> build;
    private final AdminAccess access;
    private final ThroughputHistory history;
    private final Clock clock;

    AdminApiController(
            PegaEngine engine,
            ObjectProvider<SsdStore> ssd,
            ObjectProvider<TransferEngine> transfer,
            PegaNode node,
            ObjectProvider<MetaserverClient> metaserver,
            ObjectProvider<BuildProperties> build,
            AdminAccess access,
            ThroughputHistory history) {
        this.engine = engine;
        this.ssd = ssd;
        this.transfer = transfer;
        this.node = node;
        this.metaserver = metaserver;
        this.build = build;
        this.access = access;
        this.history = history;
        this.clock = history.clock();
    }

    @GetMapping("/info")
    Info info() {
        Map<String, Boolean> subsystems = new LinkedHashMap<>();
        subsystems.put("ssd", ssd.getIfAvailable() != null);
        subsystems.put("transfer", transfer.getIfAvailable() != null);
        subsystems.put("metaserver", metaserver.getIfAvailable() != null);
        BuildProperties props = build.getIfAvailable();
        String version = props == null || props.getVersion() == null ? "dev" : props.getVersion();
        return new Info("pega-server", version, engine.backendName(), clock.millis(), REFRESH_MS, subsystems);
    }

    @GetMapping("/overview")
    Overview overview() {
        PoolView p = engine.pool();
        EngineMetricsView m = engine.metrics();
        Pool pool = new Pool(
                p.capacityBytes(),
                p.usedBytes(),
                p.largestFreeBytes(),
                p.outstandingAllocations(),
                m.count(EngineCounter.POOL_ALLOC_FAILURES));
        Cache cache = new Cache(
                engine.cache().size(),
                engine.cache().residentBytes(),
                m.inflightBytes(),
                m.count(EngineCounter.CACHE_INSERTIONS),
                m.count(EngineCounter.CACHE_ADMISSION_REJECTIONS),
                m.count(EngineCounter.CACHE_EVICTIONS),
                m.count(EngineCounter.CACHE_BLOCK_HITS),
                m.count(EngineCounter.CACHE_BLOCK_MISSES));
        Map<String, Long> tiers = new TreeMap<>();
        for (String tier : m.tierNames()) {
            tiers.put(tier, m.tierRequests(tier));
        }
        List<ThroughputHistory.Sample> samples = history.samples();
        return new Overview(
                clock.millis(),
                pool,
                cache,
                tiers,
                rates(samples),
                engine.activeLeases(),
                engine.status().instanceCount(),
                engine.status().sessionCount(),
                engine.status().detachedCount(),
                samples,
                ThroughputHistory.INTERVAL.toMillis());
    }

    /** Rates over the last interval the history holds (zero before a second sample). */
    static Rates rates(List<ThroughputHistory.Sample> samples) {
        if (samples.size() < 2) {
            return new Rates(0, 0, 0, 0, 0, Map.of());
        }
        ThroughputHistory.Sample a = samples.get(samples.size() - 2);
        ThroughputHistory.Sample b = samples.get(samples.size() - 1);
        long windowMs = Math.max(1, b.tMs() - a.tMs());
        double perSec = 1000.0 / windowMs;
        Map<String, Double> ratio = new TreeMap<>();
        long requested = 0;
        for (Map.Entry<String, Long> e : b.tiers().entrySet()) {
            requested += e.getValue() - a.tiers().getOrDefault(e.getKey(), 0L);
        }
        if (requested > 0) {
            for (Map.Entry<String, Long> e : b.tiers().entrySet()) {
                ratio.put(e.getKey(), (e.getValue() - a.tiers().getOrDefault(e.getKey(), 0L)) / (double) requested);
            }
        }
        return new Rates(
                windowMs,
                (b.saveBytes() - a.saveBytes()) * perSec,
                (b.loadBytes() - a.loadBytes()) * perSec,
                (b.ssdReadBytes() - a.ssdReadBytes()) * perSec,
                (b.ssdWriteBytes() - a.ssdWriteBytes()) * perSec,
                ratio);
    }

    @GetMapping("/instances")
    Instances instances() {
        return new Instances(engine.status().instanceSummaries().stream()
                .map(AdminDocuments.Instance::of)
                .toList());
    }

    @GetMapping("/leases")
    Leases leases() {
        List<Lease> leases = engine.status().leaseSummaries().stream()
                .map(AdminApiController::lease)
                .toList();
        long blocks = leases.stream().mapToLong(Lease::blocks).sum();
        return new Leases(clock.millis(), engine.config().leaseTtl().toMillis(), leases.size(), blocks, leases);
    }

    private static Lease lease(LeaseSummary s) {
        return new Lease(s.idPrefix(), s.instanceId(), s.blocks(), s.consumersLeft(), s.expiresInNanos() / 1_000_000L);
    }

    @GetMapping("/ssd")
    Ssd ssd() {
        SsdStore store = ssd.getIfAvailable();
        if (store == null) {
            return Ssd.off();
        }
        SsdMetricsView m = store.metrics();
        List<Shard> shards =
                store.shardStatus().stream().map(AdminApiController::shard).toList();
        Map<String, Long> writes = new LinkedHashMap<>();
        writes.put("blocks", m.count(SsdCounter.WRITE_BLOCKS));
        writes.put("bytes", m.count(SsdCounter.WRITE_BYTES));
        writes.put("failures", m.count(SsdCounter.WRITE_FAILURES));
        writes.put("queue_full", m.count(SsdCounter.WRITE_QUEUE_FULL));
        writes.put("queue_pending", m.gauge(SsdGauge.WRITE_QUEUE_PENDING));
        writes.put("inflight", m.gauge(SsdGauge.WRITE_INFLIGHT));
        Map<String, Long> reads = new LinkedHashMap<>();
        reads.put("blocks", m.count(SsdCounter.PREFETCH_BLOCKS));
        reads.put("bytes", m.count(SsdCounter.PREFETCH_BYTES));
        reads.put("failures", m.count(SsdCounter.PREFETCH_FAILURES));
        reads.put("queue_full", m.count(SsdCounter.PREFETCH_QUEUE_FULL));
        reads.put("queue_pending", m.gauge(SsdGauge.PREFETCH_QUEUE_PENDING));
        reads.put("inflight", m.gauge(SsdGauge.PREFETCH_INFLIGHT));
        reads.put("reserved", m.gauge(SsdGauge.PREFETCH_RESERVED));
        Map<String, Long> errors = new LinkedHashMap<>();
        for (SsdErrorKind kind : SsdErrorKind.values()) {
            errors.put(kind.label(), m.errors(kind));
        }
        return new Ssd(true, null, store.healthy(), shards, writes, reads, errors, rates(history.samples()));
    }

    private static Shard shard(ShardStatus s) {
        SsdErrorKind kind = s.failureKind();
        return new Shard(
                s.id(),
                s.path(),
                s.healthy(),
                kind == null ? null : kind.label(),
                s.failureDetail() == null ? "" : s.failureDetail(),
                s.usedBytes(),
                s.capacityBytes(),
                s.entries(),
                s.bytesWritten(),
                s.bytesRead());
    }

    @GetMapping("/transfer")
    Transfer transfer() {
        TransferEngine t = transfer.getIfAvailable();
        if (t == null) {
            return Transfer.off();
        }
        TransferView v = t.view();
        return new Transfer(
                true,
                null,
                v.fabric(),
                v.nics(),
                v.transports(),
                v.lanes(),
                v.registeredRegions(),
                v.registeredBytes(),
                v.inFlightOps(),
                v.peers().stream().map(AdminApiController::peer).toList(),
                poolMemory());
    }

    private PoolMemory poolMemory() {
        int shards = engine.pool().regions().size();
        UcxSharedMemory context = node.poolMemory().orElse(null);
        return context == null
                ? new PoolMemory("private", shards, 0, 0)
                : new PoolMemory("ucx", shards, context.sharedOutstanding(), context.borrowers());
    }

    private static Peer peer(PeerView p) {
        return new Peer(
                p.peer().toString(),
                p.state(),
                p.lanes().stream()
                        .map(l -> new Connection(l.index(), l.state(), l.inFlightOps(), l.opsIssued()))
                        .toList(),
                p.connects(),
                p.drops(),
                p.inFlightOps(),
                p.batches(),
                p.opsCompleted(),
                p.opsFailed(),
                p.bytesRead(),
                p.bytesWritten(),
                new TreeMap<>(p.errors()),
                p.lastError(),
                p.latencyP50Micros(),
                p.latencyP99Micros(),
                p.latencyMaxMicros());
    }

    @GetMapping("/metaserver")
    Metaserver metaserver() {
        MetaserverClient client = metaserver.getIfAvailable();
        if (client == null) {
            return Metaserver.off();
        }
        MetaserverClientStats s = client.stats();
        Map<String, Long> counters = new LinkedHashMap<>();
        counters.put("registration_blocks", s.registrationBlocks());
        counters.put("registration_failures", s.registrationFailures());
        counters.put("removal_blocks", s.removalBlocks());
        counters.put("removal_failures", s.removalFailures());
        counters.put("heartbeat_failures", s.heartbeatFailures());
        counters.put("session_resets", s.sessionResets());
        counters.put("reannouncements", s.reannouncements());
        return new Metaserver(
                true,
                null,
                client.target(),
                client.advertiseAddr(),
                client.link().name(),
                client.metaserverEpoch(),
                client.lastFailure(),
                counters);
    }

    @GetMapping("/access")
    Access access(HttpServletRequest request) {
        boolean loopback = Boolean.TRUE.equals(request.getAttribute(SocketPeerValve.LOOPBACK_LISTENER));
        return new Access(access.permits(request), access.tokenConfigured(), loopback, AdmissionValve.DENIED);
    }
}
