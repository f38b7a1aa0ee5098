package io.pegaflow.server.push;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.instance.Principal;
import io.pegaflow.edge.access.ClusterCredential;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.push.PushConfig;
import io.pegaflow.push.PushEngine;
import io.pegaflow.push.PushStats;
import io.pegaflow.push.grpc.CallerUid;
import io.pegaflow.push.grpc.GrpcDecodeLink;
import io.pegaflow.push.grpc.PdPushGrpcService;
import io.pegaflow.push.layout.HandshakeSeal;
import io.pegaflow.server.config.ClusterProperties;
import io.pegaflow.server.grpc.CallerUids;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.server.metrics.ServerMetric;
import io.pegaflow.server.transfer.RdmaConfiguration;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferKeys;
import io.pegaflow.transfer.ucx.UcxSharedMemory;
import io.pegaflow.transfer.ucx.UcxTransferEngine;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
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
 * The P/D push engine beside the cache engine, when {@code pega.pd.enabled=true}: its own UCX transfer engine over the
 * engine's pool regions, the engine's device backend for worker layers, and the {@code pegaflow.ext.PdPush} service.
 * The push engine depends on the cache engine, so Spring closes it first (its staging goes back to the pool before
 * the pool unmaps).
 *
 * <p>With shared-memory transports ({@code pega.pd.shm-pool}) and no shared-memory pool of the transfer engine's, the
 * push engine's context is made first and allocates the pool ({@link UcxSharedMemory}, decision 0019), and it closes
 * after the pool, as {@code RdmaConfiguration} does for its own. Where the transfer engine's context allocated the
 * pool, the push engine runs on that context when its NICs and transports are the same, and the context then closes
 * after the push engine too.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "pega.pd.enabled", havingValue = "true")
public class PdPushConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(PdPushConfiguration.class);

    static final String POOL_MEMORY_BEAN = "pdPoolMemory";
    static final String PUSH_BEAN = "pushEngine";
    /** The keys a refused push setting is reported under. */
    static final TransferKeys KEYS =
            new TransferKeys("pega.pd.enabled", "pega.pd.nics", "pega.pd.lanes", "pega.pd.transports");

    /** The push engine's UCX context, made before the pool so that it allocates the pool's shards. */
    @Bean(name = POOL_MEMORY_BEAN, destroyMethod = "close")
    @Conditional(SharedMemoryPool.class)
    UcxSharedMemory pdPoolMemory(PdProperties p, ConfigurableListableBeanFactory beans) {
        UcxSharedMemory memory = RdmaConfiguration.starting(KEYS, () -> UcxSharedMemory.open(transferConfig(p)));
        RdmaConfiguration.closesAfterPool(beans, POOL_MEMORY_BEAN, PUSH_BEAN);
        return memory;
    }

    @Bean(name = PUSH_BEAN, destroyMethod = "close")
    PushEngine pushEngine(
            PdProperties p,
            ClusterProperties cluster,
            ClusterCredential credential,
            PegaEngine engine,
            AgentGroup agents,
            GrpcPort port,
            @Qualifier(POOL_MEMORY_BEAN) ObjectProvider<UcxSharedMemory> poolMemory,
            @Qualifier(RdmaConfiguration.POOL_MEMORY_BEAN) ObjectProvider<UcxSharedMemory> rdmaPoolMemory,
            ConfigurableListableBeanFactory beans) {
        PushConfig config = new PushConfig(
                p.pushTimeout(),
                p.receiveTimeout(),
                p.connectTimeout(),
                p.rpcTimeout(),
                p.quarantine(),
                p.maxInflightLayers(),
                p.maxRequests(),
                p.putChunk().toBytes(),
                p.maxRequestsPerPrincipal());
        TransferConfig transfer = transferConfig(p);
        UcxSharedMemory shared =
                poolContext(transfer, poolMemory.getIfAvailable(), rdmaPoolMemory.getIfAvailable(), beans);
        String advertised = p.advertiseAddress();
        HandshakeSeal seal = HandshakeSeal.of(cluster.token()); // ClusterConfiguration warns when it is empty
        return new PushEngine(
                config,
                seal,
                engine.staging(),
                engine.sideRegistrations(),
                engine.deviceBackend(),
                RdmaConfiguration.starting(
                        KEYS,
                        () -> UcxTransferEngine.open(
                                transfer, shared, engine.pool().regions(), NanoClock.SYSTEM)),
                new GrpcDecodeLink(p.rpcTimeout(), credential.attach()),
                NanoClock.SYSTEM,
                agents,
                () -> advertised.isBlank() ? "127.0.0.1:" + port.port() : advertised);
    }

    /**
     * The context the push engine runs on: the one that allocated the pool, its own or the transfer engine's (then with
     * the same NICs and transports, so that a prefill server's puts into this host's pools are copies into attached
     * segments, and the context closes after the push engine); null for a context of its own over a pool it registers
     * like any memory.
     */
    static @Nullable UcxSharedMemory poolContext(
            TransferConfig push,
            @Nullable UcxSharedMemory own,
            @Nullable UcxSharedMemory rdma,
            ConfigurableListableBeanFactory beans) {
        if (own != null || rdma == null) {
            return own;
        }
        if (rdma.serves(push)) {
            beans.registerDependentBean(RdmaConfiguration.POOL_MEMORY_BEAN, PUSH_BEAN);
            LOG.info("P/D push engine runs on the transfer engine's UCX context, which allocated the pool");
            return rdma;
        }
        LOG.info(
                "P/D push engine has a UCX context of its own: pega.pd.nics/transports ({}, '{}') differ from"
                        + " pega.rdma's, whose context allocated the pool, so pushes into this pool from the same"
                        + " host are emulated puts; set them equal to make them copies into shared memory",
                String.join(",", push.nics()),
                push.transports());
        return null;
    }

    /** @throws IllegalArgumentException naming the {@code pega.pd} key whose value was refused */
    private static TransferConfig transferConfig(PdProperties p) {
        return RdmaConfiguration.starting(KEYS, () -> TransferConfig.of(p.nics(), p.lanes(), p.transports(), KEYS));
    }

    /**
     * {@code pega.pd.shm-pool} is on, {@code pega.pd.transports} lets UCX use shared memory, and the transfer engine's
     * context does not allocate the pool already (one context can; the other then registers the pool like any memory).
     */
    static final class SharedMemoryPool implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            Environment env = context.getEnvironment();
            return env.getProperty("pega.pd.shm-pool", Boolean.class, true)
                    && TransferConfig.allowsSharedMemory(env.getProperty("pega.pd.transports", ""))
                    && !RdmaConfiguration.SharedMemoryPool.active(env);
        }
    }

    /** The push engine's entries of the server catalog ({@code pegaflow_pd_*}), read at scrape time. */
    @Bean
    MeterBinder pdPushMeterBinder(PushEngine push) {
        return registry -> {
            CatalogMeters m = new CatalogMeters(registry);
            PushStats s = push.stats();
            m.gauge(ServerMetric.PEGAFLOW_PD_PUSHES_IN_FLIGHT, s, PushStats::pushesInFlight);
            m.gauge(ServerMetric.PEGAFLOW_PD_RECEIVES_IN_FLIGHT, s, PushStats::receivesInFlight);
            m.countOf(ServerMetric.PEGAFLOW_PD_PUSHED_BYTES, s, PushStats::bytesPushed);
            m.countOf(ServerMetric.PEGAFLOW_PD_RECEIVED_BYTES, s, PushStats::bytesReceived);
            m.countOf(ServerMetric.PEGAFLOW_PD_PUSH_FAILURES, s, PushStats::pushFailures);
            m.countOf(ServerMetric.PEGAFLOW_PD_RECEIVE_FAILURES, s, PushStats::receiveFailures);
            Timer lag = m.timer(ServerMetric.PEGAFLOW_PD_LAYER_LAG);
            s.bindLayerLag(nanos -> lag.record(nanos, TimeUnit.NANOSECONDS));
        };
    }

    @Bean
    PdPushGrpcService pdPushGrpcService(PushEngine push) {
        return new PdPushGrpcService(push, new CallerUid() {
            @Override
            public OptionalInt current() {
                return CallerUids.current();
            }

            @Override
            public Principal principal() {
                return CallerUids.principal();
            }
        });
    }
}
