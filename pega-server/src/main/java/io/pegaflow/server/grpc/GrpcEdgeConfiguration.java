package io.pegaflow.server.grpc;

import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.edge.rpc.InternalErrorLog;
import io.pegaflow.edge.rpc.RpcMetricsInterceptor;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.server.metrics.ServerMetric;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The server's part of the shared RPC edge (docs/decisions/0007): its exception mapping, RPC metrics, Session headers. */
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
}
