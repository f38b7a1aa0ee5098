package io.pegaflow.metaserver.grpc;

import io.grpc.netty.NettyServerBuilder;
import io.pegaflow.edge.EdgeConfiguration;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.edge.rpc.RpcMetricsInterceptor;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.metaserver.config.MetaserverProperties;
import io.pegaflow.metaserver.index.BlockIndex;
import io.pegaflow.metaserver.metrics.MetaserverMetric;
import io.pegaflow.proto.MetaServerGrpc;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.grpc.server.ServerBuilderCustomizer;

/**
 * The metaserver's part of the shared RPC edge (docs/decisions/0007): its exception mapping, its RPC metrics and the
 * epoch header. The edge's chain applies the interceptors in their stages.
 */
@Configuration(proxyBeanMethods = false)
@Import(EdgeConfiguration.class)
class GrpcConfiguration {

    @Bean
    MetaserverExceptionHandler metaserverExceptionHandler() {
        return new MetaserverExceptionHandler();
    }

    @Bean
    EpochHeaderInterceptor epochHeaderInterceptor(BlockIndex index) {
        return new EpochHeaderInterceptor(index::epoch);
    }

    /** {@code pegaflow_metaserver_rpc_requests_total} and {@code _duration_seconds}. */
    @Bean
    RpcMetricsInterceptor rpcMetricsInterceptor(CatalogMeters meters) {
        return new RpcMetricsInterceptor(
                meters,
                MetaServerGrpc.SERVICE_NAME,
                MetaserverMetric.PEGAFLOW_METASERVER_RPC_REQUESTS,
                MetaserverMetric.PEGAFLOW_METASERVER_RPC_DURATION);
    }

    /** A fixed set of workers for every call instead of gRPC's unbounded cached pool (see {@link CallWorkers}). */
    @Bean(destroyMethod = "close")
    CallWorkers grpcCallWorkers(
            MetaserverProperties properties, @Value("${spring.datasource.hikari.maximum-pool-size:4}") int poolSize) {
        MetaserverProperties.Calls calls = properties.calls();
        return new CallWorkers(
                calls.workersFor(Runtime.getRuntime().availableProcessors()),
                calls.dbWorkersFor(poolSize),
                calls.queue(),
                new AgentGroup());
    }

    @Bean
    ServerBuilderCustomizer<NettyServerBuilder> grpcCallExecutor(CallWorkers workers) {
        return builder -> builder.executor(workers.executor()).callExecutor(workers.perCall());
    }

    /** Skips calls cancelled while queued and sheds those queued too long, counting both by method. */
    @Bean
    ExpiredCallInterceptor expiredCallInterceptor(MetaserverProperties properties, CatalogMeters meters) {
        return new ExpiredCallInterceptor(
                TimeUnit.MILLISECONDS.toNanos(properties.calls().maxQueueWaitMs()), meters);
    }
}
