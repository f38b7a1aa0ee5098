package io.pegaflow.server.push;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pegaflow.core.instance.Principal;
import io.pegaflow.edge.access.ClusterChannels;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.node.NodeContext;
import io.pegaflow.node.PegaNode;
import io.pegaflow.node.UcxStep;
import io.pegaflow.push.PushConfig;
import io.pegaflow.push.PushEngine;
import io.pegaflow.push.PushStats;
import io.pegaflow.push.grpc.CallerUid;
import io.pegaflow.push.grpc.GrpcDecodeLink;
import io.pegaflow.push.grpc.PdPushGrpcService;
import io.pegaflow.push.grpc.PushWire;
import io.pegaflow.push.layout.HandshakeSeal;
import io.pegaflow.server.config.ClusterProperties;
import io.pegaflow.server.config.NodeCustomizer;
import io.pegaflow.server.grpc.CallerUids;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.server.metrics.ServerMetric;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferKeys;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The P/D push, when {@code pega.pd.enabled=true}: the node gets a push engine on the engine's staging allocator and
 * registrations, with its own UCX engine over the pool's regions, and the {@code pegaflow.ext.PdPush} service.
 *
 * <p>With shared-memory transports ({@code pega.pd.shm-pool}) and no shared-memory pool of the P2P engine's, the push
 * engine's UCX context allocates the pool (decision 0019). Where the P2P engine's context allocated it, the push engine
 * runs on that context when its NICs and transports are the same. The node ({@link PegaNode}) decides and closes it
 * all in order: the push engine first, its context after the pool.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "pega.pd.enabled", havingValue = "true")
public class PdPushConfiguration {
    /** The keys a refused push setting is reported under. */
    static final TransferKeys KEYS =
            new TransferKeys("pega.pd.enabled", "pega.pd.nics", "pega.pd.lanes", "pega.pd.transports");

    @Bean
    NodeCustomizer pushNode(PdProperties p, ClusterProperties cluster, ClusterChannels channels, GrpcPort port) {
        return node -> {
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
            String advertised = p.advertiseAddress();
            node.push(new NodeContext.Push(
                    new NodeContext.Ucx(transferConfig(p), KEYS, p.shmPool()),
                    config,
                    HandshakeSeal.of(cluster.token()), // ClusterConfiguration warns when it is empty
                    new PushWire(),
                    new GrpcDecodeLink(p.rpcTimeout(), channels.credentials(), channels.credential()),
                    () -> advertised.isBlank() ? "127.0.0.1:" + port.port() : advertised));
        };
    }

    /** The node's push engine; the node closes it. */
    @Bean(destroyMethod = "")
    PushEngine pushEngine(PegaNode node) {
        return node.push().orElseThrow();
    }

    /** @throws IllegalArgumentException naming the {@code pega.pd} key whose value was refused */
    private static TransferConfig transferConfig(PdProperties p) {
        return UcxStep.run(KEYS, () -> TransferConfig.of(p.nics(), p.lanes(), p.transports(), KEYS));
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
