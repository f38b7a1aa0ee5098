package io.pegaflow.server.grpc;

import io.grpc.ServerBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pegaflow.edge.access.ClusterCredential;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.edge.rpc.InternalErrorLog;
import io.pegaflow.edge.rpc.RpcMetricsInterceptor;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.ext.push.PdPushGrpc;
import io.pegaflow.server.metrics.ServerMetric;
import java.time.Duration;
import java.util.Set;
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

    /**
     * {@code pegaflow_pd_rpc_requests_total} and {@code pegaflow_pd_rpc_duration_seconds} of {@code pegaflow.ext.PdPush}
     * (served when {@code pega.pd.enabled}): its unary calls are counted with the status the client got, as the
     * engine's are.
     */
    @Bean
    RpcMetricsInterceptor pdPushRpcMetricsInterceptor(CatalogMeters meters) {
        return new RpcMetricsInterceptor(
                meters,
                PdPushGrpc.SERVICE_NAME,
                ServerMetric.PEGAFLOW_PD_RPC_REQUESTS,
                ServerMetric.PEGAFLOW_PD_RPC_DURATION);
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

    /**
     * The RPCs servers of one cluster make to each other need the cluster credential when one is configured: the
     * transfer RPCs take UCX worker addresses and end a peer's locks, the push's end or fail receives.
     */
    @Bean
    EdgeInterceptor clusterCredentialInterceptor(ClusterCredential credential) {
        return credential.require(Set.of(
                EngineGrpc.getRdmaHandshakeMethod().getFullMethodName(),
                EngineGrpc.getQueryBlocksForTransferMethod().getFullMethodName(),
                EngineGrpc.getReleaseTransferLockMethod().getFullMethodName(),
                PdPushGrpc.getLayerArrivedMethod().getFullMethodName(),
                PdPushGrpc.getPushFailedMethod().getFullMethodName(),
                PdPushGrpc.getWatchReceiveMethod().getFullMethodName()));
    }

    /**
     * Bounds what one connection holds (decision 0030 §3): its concurrent streams and each stream's flow-control
     * window, so that slow or stalled senders on one connection cannot take the memory a legitimate large Save on
     * another needs.
     */
    @Bean
    ServerBuilderCustomizer<NettyServerBuilder> grpcTransportLimits(GrpcTransportProperties transport) {
        int window = transport.flowControlWindowBytes();
        return builder -> builder.maxConcurrentCallsPerConnection(transport.maxConcurrentCallsPerConnection())
                .flowControlWindow(window);
    }

    /** At most {@code pega.grpc.max-connections} connections at once (decision 0031 §4). */
    @Bean(destroyMethod = "close")
    ConnectionLimit grpcConnectionLimit(GrpcTransportProperties transport) {
        return new ConnectionLimit(transport.maxConnections(), NanoClock.SYSTEM);
    }

    @Bean
    ServerBuilderCustomizer<NettyServerBuilder> grpcConnectionBound(ConnectionLimit limit) {
        return limit::applyTo;
    }

    /** {@code pegaflow_grpc_connections} and {@code pegaflow_grpc_connections_refused_total}. */
    @Bean
    MeterBinder grpcConnectionMeters(ConnectionLimit limit) {
        return registry -> {
            CatalogMeters m = new CatalogMeters(registry);
            m.gauge(ServerMetric.PEGAFLOW_GRPC_CONNECTIONS, limit, ConnectionLimit::open);
            m.countOf(ServerMetric.PEGAFLOW_GRPC_CONNECTIONS_REFUSED, limit, ConnectionLimit::refused);
        };
    }

    /** Ends calls whose one request message never completes (decision 0030 §3). */
    @Bean(destroyMethod = "close")
    IncompleteMessageTimeout incompleteMessageTimeout(GrpcTransportProperties transport) {
        Duration timeout = transport.incompleteMessageTimeout();
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("pega.grpc.incomplete-message-timeout: " + timeout + " (expected: > 0)");
        }
        return new IncompleteMessageTimeout(timeout, NanoClock.SYSTEM);
    }

    /** Works out a connection's {@link CallerIdentity} once, when it is ready. */
    @Bean
    <T extends ServerBuilder<T>> ServerBuilderCustomizer<T> callerIdentityFilter() {
        return builder -> builder.addTransportFilter(CallerIdentity.transportFilter());
    }
}
