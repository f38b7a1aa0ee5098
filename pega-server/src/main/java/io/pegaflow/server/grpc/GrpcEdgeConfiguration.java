package io.pegaflow.server.grpc;

import io.grpc.ServerBuilder;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.edge.rpc.InternalErrorLog;
import io.pegaflow.edge.rpc.RpcMetricsInterceptor;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.server.metrics.ServerMetric;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.grpc.server.ServerBuilderCustomizer;

/** The server's part of the shared RPC edge (docs/decisions/0007): its exception mapping, RPC metrics, Session headers, caller identity. */
@Configuration(proxyBeanMethods = false)
class GrpcEdgeConfiguration {

    @Bean
    EngineExceptionHandler engineExceptionHandler(InternalErrorLog log) {
        return new EngineExceptionHandler(log);
    }

    /** {@code pegaflow_rpc_requests_total} and {@code pegaflow_rpc_duration_seconds} of {@code pegaflow.Engine}. */
    @Bean
    RpcMetricsInterceptor rpcMetricsInterceptor(CatalogMeters meters) {
        return new RpcMetricsInterceptor(
                meters,
                EngineGrpc.SERVICE_NAME,
                ServerMetric.PEGAFLOW_RPC_REQUESTS,
                ServerMetric.PEGAFLOW_RPC_DURATION);
    }

    @Bean
    SessionHeadersInterceptor sessionHeadersInterceptor() {
        return new SessionHeadersInterceptor();
    }

    /** Each call's {@link CallerIdentity}: who owns what it registers, whose memory it may open. */
    @Bean
    EdgeInterceptor callerIdentityInterceptor() {
        return CallerIdentity.interceptor();
    }

    /** Works out a connection's {@link CallerIdentity} once, when it is ready. */
    @Bean
    <T extends ServerBuilder<T>> ServerBuilderCustomizer<T> callerIdentityFilter() {
        return builder -> builder.addTransportFilter(CallerIdentity.transportFilter());
    }
}
