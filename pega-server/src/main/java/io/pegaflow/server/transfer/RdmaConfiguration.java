package io.pegaflow.server.transfer;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.server.metrics.ServerMetric;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferException;
import io.pegaflow.transfer.TransferKeys;
import io.pegaflow.transfer.ucx.UcxSharedMemory;
import io.pegaflow.transfer.ucx.UcxTransferEngine;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * The transfer engine, when {@code pega.rdma.enabled=true}: one UCX context for the node with the pool's regions
 * registered once, {@code qps-per-peer} lanes. A bad NIC list or any UCX initialisation failure stops startup with one
 * line naming the key; there is no fallback to running without transfers (reference #283/#276).
 *
 * <p>With {@code pega.rdma.shm-pool} (the default) the UCX context comes first and allocates the pool's shards
 * ({@link UcxSharedMemory}), so peers on this host read pool memory through shared memory (decision 0019).
 *
 * <p>Close order: the transfer engine must close (endpoints, workers, then the regions' registrations) before the
 * engine unmaps the pool, and the pool must hand its shards back before the context they came from closes. Neither
 * the engine nor the pool knows it, so the beans are declared dependents ({@code registerDependentBean}) and Spring
 * destroys the transfer engine, then the engine and the pool, then the context.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "pega.rdma.enabled", havingValue = "true")
public class RdmaConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaConfiguration.class);

    static final String ENGINE_BEAN = "pegaEngine";
    static final String POOL_BEAN = "pegaPool";
    static final String TRANSFER_BEAN = "rdmaTransferEngine";
    public static final String POOL_MEMORY_BEAN = "rdmaPoolMemory";

    /**
     * The node's UCX context, made before the pool so that it allocates the pool's shards; only where a peer can use
     * that ({@link SharedMemoryPool}).
     */
    @Bean(name = POOL_MEMORY_BEAN, destroyMethod = "close")
    @Conditional(SharedMemoryPool.class)
    UcxSharedMemory rdmaPoolMemory(RdmaProperties rdma, ConfigurableListableBeanFactory beans) {
        rdma.check();
        UcxSharedMemory memory = starting(TransferKeys.RDMA, () -> UcxSharedMemory.open(transferConfig(rdma)));
        closesAfterPool(beans, POOL_MEMORY_BEAN);
        return memory;
    }

    /**
     * Declares that the context bean {@code contextBean}, which allocated the pool, is destroyed after the pool, the
     * engine and the beans {@code borrowers} (engines on that context): the pool's shards go back before it closes.
     */
    public static void closesAfterPool(ConfigurableListableBeanFactory beans, String contextBean, String... borrowers) {
        beans.registerDependentBean(contextBean, POOL_BEAN);
        beans.registerDependentBean(contextBean, ENGINE_BEAN);
        for (String borrower : borrowers) {
            beans.registerDependentBean(contextBean, borrower);
        }
    }

    @Bean(name = TRANSFER_BEAN, destroyMethod = "close")
    TransferEngine rdmaTransferEngine(
            RdmaProperties rdma,
            PinnedMemoryPool pool,
            @Qualifier(POOL_MEMORY_BEAN) ObjectProvider<UcxSharedMemory> poolMemory,
            ConfigurableListableBeanFactory beans) {
        rdma.check();
        UcxSharedMemory shared = poolMemory.getIfAvailable();
        TransferEngine engine = starting(
                TransferKeys.RDMA,
                () -> UcxTransferEngine.open(transferConfig(rdma), shared, pool.regions(), NanoClock.SYSTEM));
        beans.registerDependentBean(ENGINE_BEAN, TRANSFER_BEAN);
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
    MeterBinder transferMeterBinder(TransferMeters peers, PegaEngine engine, ObjectProvider<RemoteFetchTier> remote) {
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
            RemoteFetchTier tier = remote.getIfAvailable();
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
    TransferStatusView transferStatusView(
            TransferEngine transfers, PegaEngine engine, ObjectProvider<RemoteFetchTier> remote) {
        return new TransferStatusView(transfers, engine, remote.getIfAvailable());
    }

    /**
     * {@code pega.rdma.shm-pool} is on and {@code pega.rdma.transports} lets UCX use shared memory. With a list of
     * network transports only ({@code tcp}), UCX would allocate private memory anyway, and the pool keeps its own
     * mapping (and its huge-page setting).
     */
    public static final class SharedMemoryPool implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return active(context.getEnvironment());
        }

        /** Whether the transfer engine's context allocates the pool (the push engine's then does not). */
        public static boolean active(Environment env) {
            return env.getProperty("pega.rdma.enabled", Boolean.class, false)
                    && env.getProperty("pega.rdma.shm-pool", Boolean.class, true)
                    && TransferConfig.allowsSharedMemory(env.getProperty("pega.rdma.transports", ""));
        }
    }

    /** @throws IllegalArgumentException naming the key whose value UCX refused */
    static TransferConfig transferConfig(RdmaProperties rdma) {
        return starting(
                TransferKeys.RDMA,
                () -> TransferConfig.of(rdma.nics(), rdma.qpsPerPeer(), rdma.transports(), TransferKeys.RDMA));
    }

    /**
     * Runs a step of a UCX engine's startup (this transfer engine's, or the push engine's under its own {@code keys}).
     *
     * @throws IllegalArgumentException whose message starts with the key, so startup prints it as one line
     */
    public static <T> T starting(TransferKeys keys, Supplier<T> step) {
        try {
            return step.get();
        } catch (TransferException e) {
            String message = e.getMessage();
            throw new IllegalArgumentException(
                    message != null && message.startsWith("pega.") ? message : keys.nics() + ": " + message, e);
        } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
            throw new IllegalArgumentException(
                    keys.enabled() + ": true, but UCX cannot be loaded (install Debian's libucx0): " + e.getMessage(),
                    e);
        }
    }
}
