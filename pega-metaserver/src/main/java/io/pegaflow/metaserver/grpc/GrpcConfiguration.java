package io.pegaflow.metaserver.grpc;

import io.micrometer.core.instrument.MeterRegistry;
import io.pegaflow.metaserver.node.MetaserverEpoch;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.grpc.server.GlobalServerInterceptor;

/** Registers the interceptors that Spring gRPC applies to every service of the metaserver. */
@Configuration(proxyBeanMethods = false)
class GrpcConfiguration {

    @Bean
    @GlobalServerInterceptor
    EpochHeaderInterceptor epochHeaderInterceptor(MetaserverEpoch epoch) {
        return new EpochHeaderInterceptor(epoch);
    }

    @Bean
    @GlobalServerInterceptor
    RpcMetricsInterceptor rpcMetricsInterceptor(MeterRegistry registry) {
        return new RpcMetricsInterceptor(registry);
    }
}
