package io.pegaflow.server.transfer;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.node.NodeContext;
import io.pegaflow.node.PegaNode;
import io.pegaflow.node.UcxStep;
import io.pegaflow.node.remote.RemoteFetchStats;
import io.pegaflow.node.remote.RemoteFetchTier;
import io.pegaflow.server.config.NodeCustomizer;
import io.pegaflow.server.metrics.ServerMetric;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferKeys;
import io.pegaflow.transfer.ucx.UcxSharedMemory;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * P2P transfers, when {@code pega.rdma.enabled=true}: the node gets one UCX engine with the pool's regions registered
 * once and {@code qps-per-peer} lanes. A bad NIC list or any UCX initialisation failure stops startup with one line
 * naming the key; there is no fallback to running without transfers (reference #283/#276).
 *
 * <p>With {@code pega.rdma.shm-pool} (the default) the engine's UCX context comes first and allocates the pool's
 * shards, so peers on this host read pool memory through shared memory (decision 0019). The node
 * ({@link PegaNode}) builds and closes all of it in order.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "pega.rdma.enabled", havingValue = "true")
public class RdmaConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaConfiguration.class);

    @Bean
    NodeCustomizer rdmaNode(RdmaProperties rdma) {
        return node -> {
            rdma.check();
            node.p2p(new NodeContext.Ucx(transferConfig(rdma), TransferKeys.RDMA, rdma.shmPool()));
        };
    }

    /** The node's P2P transfer engine; the node closes it. */
    @Bean(destroyMethod = "")
    TransferEngine rdmaTransferEngine(PegaNode node, RdmaProperties rdma) {
        TransferEngine engine = node.transfers().orElseThrow();
        UcxSharedMemory shared = node.poolMemory().orElse(null);
        LOG.info(
                "transfer engine ready: nics={} transports={} qps_per_peer={} regions={} ({} MiB registered, pool"
                        + " {})",
                engine.view().nics(),
                rdma.transports().isBlank() ? "(UCX's choice)" : rdma.transports(),
                engine.lanes(),
                engine.view().registeredRegions(),
                engine.view().registeredBytes() >> 20,
                shared == null
                        ? "mapped privately"
                        : "allocated by UCX, " + shared.sharedOutstanding() + " of " + shared.outstanding()
                                + " shards in shared memory");
        return engine;
    }

    @Bean
    TransferMeters transferMeters(CatalogMeters meters, TransferEngine transfers) {
        return new TransferMeters(meters, transfers, NanoClock.SYSTEM);
    }

    /** The node-wide transfer entries of the catalog, read at scrape time. */
    @Bean
    MeterBinder transferMeterBinder(TransferMeters peers, PegaEngine engine, PegaNode node) {
        return registry -> {
            CatalogMeters m = new CatalogMeters(registry);
            m.gauge(ServerMetric.PEGAFLOW_TRANSFER_PEERS, peers, TransferMeters::establishedPeers);
            m.gauge(ServerMetric.PEGAFLOW_TRANSFER_OPS_IN_FLIGHT, peers, TransferMeters::inFlightOps);
            m.gauge(
                    ServerMetric.PEGAFLOW_TRANSFER_LOCK_ACTIVE,
                    engine,
                    e -> e.transferLockStats().lockedBlocks());
            m.gauge(
                    ServerMetric.PEGAFLOW_TRANSFER_LOCK_SESSIONS,
                    engine,
                    e -> e.transferLockStats().sessions());
            m.countOf(
                    ServerMetric.PEGAFLOW_TRANSFER_LOCK_TIMEOUTS,
                    engine,
                    e -> e.transferLockStats().expired());
            m.gauge(
                    ServerMetric.PEGAFLOW_TRANSFER_LOCK_BYTES,
                    engine,
                    e -> e.transferLockStats().lockedBytes());
            m.countOf(
                    ServerMetric.PEGAFLOW_TRANSFER_LOCK_REFUSALS,
                    engine,
                    e -> e.transferLockStats().refused());
            m.countOf(
                    ServerMetric.PEGAFLOW_TRANSFER_LOCK_BROKEN,
                    engine,
                    e -> e.transferLockStats().broken());
            RemoteFetchTier tier = node.remoteTier().orElse(null);
            if (tier == null) {
                return;
            }
            RemoteFetchStats s = tier.stats();
            m.countOf(ServerMetric.PEGAFLOW_RDMA_FETCH, s, RemoteFetchStats::succeeded, "ok");
            m.countOf(ServerMetric.PEGAFLOW_RDMA_FETCH, s, x -> x.attempts() - x.succeeded(), "error");
            m.countOf(ServerMetric.PEGAFLOW_RDMA_FETCH_BYTES, s, RemoteFetchStats::bytesFetched);
            for (RemoteFetchStats.Failure f : RemoteFetchStats.Failure.values()) {
                m.countOf(ServerMetric.PEGAFLOW_RDMA_FETCH_FAILURES, s, x -> x.failures(f), f.name());
            }
            Timer fetch = m.timer(ServerMetric.PEGAFLOW_RDMA_FETCH_DURATION);
            s.bindDurations(nanos -> fetch.record(nanos, TimeUnit.NANOSECONDS));
        };
    }

    /** What {@code GET /transfer} shows; the admin UI may read it too. */
    @Bean
    TransferStatusView transferStatusView(TransferEngine transfers, PegaEngine engine, PegaNode node) {
        return new TransferStatusView(transfers, engine, node.remoteTier().orElse(null));
    }

    /** @throws IllegalArgumentException naming the key whose value UCX refused */
    static TransferConfig transferConfig(RdmaProperties rdma) {
        return UcxStep.run(
                TransferKeys.RDMA,
                () -> TransferConfig.of(rdma.nics(), rdma.qpsPerPeer(), rdma.transports(), TransferKeys.RDMA));
    }
}
