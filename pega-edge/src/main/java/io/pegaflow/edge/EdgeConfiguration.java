package io.pegaflow.edge;

import io.micrometer.core.instrument.MeterRegistry;
import io.pegaflow.edge.access.AdminAccess;
import io.pegaflow.edge.access.AdminCallerInterceptor;
import io.pegaflow.edge.access.AdmissionValve;
import io.pegaflow.edge.access.BrowserGuardValve;
import io.pegaflow.edge.access.HostAllowList;
import io.pegaflow.edge.access.HttpEdgeProperties;
import io.pegaflow.edge.access.SocketPeerValve;
import io.pegaflow.edge.lifecycle.ShutdownCoordinator;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.edge.rpc.EdgeExceptionInterceptor;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.edge.rpc.EdgeInterceptorChain;
import io.pegaflow.edge.rpc.FallbackExceptionHandler;
import io.pegaflow.edge.rpc.InternalErrorLog;
import java.time.Clock;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.tomcat.ConfigurableTomcatWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.grpc.server.GlobalServerInterceptor;
import org.springframework.grpc.server.exception.CompositeGrpcExceptionHandler;
import org.springframework.grpc.server.exception.GrpcExceptionHandler;

/**
 * The shared edge, imported by both applications ({@code @Import(EdgeConfiguration.class)}). Each app adds its own
 * {@link GrpcExceptionHandler} bean for its exception types, an {@link io.pegaflow.edge.rpc.RpcMetricsInterceptor} over
 * its catalog entries, its other {@link EdgeInterceptor}s (never {@code @GlobalServerInterceptor} beans: the chain
 * orders them), and, where it has mutating operations, an {@link io.pegaflow.edge.access.AdminAccess} built from its
 * token property.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(HttpEdgeProperties.class)
public class EdgeConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(EdgeConfiguration.class);

    /** Uses the app's {@link Clock} bean when it has exactly one (the metaserver does), the system clock otherwise. */
    @Bean
    InternalErrorLog internalErrorLog(ObjectProvider<Clock> clock) {
        return new InternalErrorLog(clock.getIfUnique(Clock::systemUTC));
    }

    /** The app's only global interceptor: every {@link EdgeInterceptor} bean, in stage order. */
    @Bean
    @GlobalServerInterceptor
    EdgeInterceptorChain edgeInterceptorChain(ObjectProvider<EdgeInterceptor> interceptors) {
        return new EdgeInterceptorChain(interceptors.orderedStream().toList());
    }

    /** The app's handlers in their order, then the fallback that maps everything else (and logs INTERNAL). */
    @Bean
    EdgeExceptionInterceptor edgeExceptionInterceptor(
            ObjectProvider<GrpcExceptionHandler> handlers, InternalErrorLog log) {
        GrpcExceptionHandler[] chain = Stream.concat(
                        handlers.orderedStream(), Stream.of(new FallbackExceptionHandler(log)))
                .toArray(GrpcExceptionHandler[]::new);
        return new EdgeExceptionInterceptor(new CompositeGrpcExceptionHandler(chain));
    }

    /** The gRPC caller for the admin rule; the listener is loopback-only when {@code spring.grpc.server.host} is. */
    @Bean
    AdminCallerInterceptor adminCallerInterceptor(Environment environment) {
        return new AdminCallerInterceptor(
                AdminAccess.isLoopbackBind(environment.getProperty("spring.grpc.server.host", "*")));
    }

    /**
     * Records each request's socket peer, refuses a foreign Host and a cross-site mutation, then refuses what the admin
     * rule would refuse; all before a body is read.
     */
    @Bean
    WebServerFactoryCustomizer<ConfigurableTomcatWebServerFactory> socketPeerValve(
            ObjectProvider<AdminAccess> access,
            HttpEdgeProperties http,
            Environment environment,
            ObjectProvider<Clock> clock) {
        HostAllowList hosts = new HostAllowList(http.allowedHosts(), environment.getProperty("server.address"));
        if (hosts.admitsAny()) {
            LOG.warn("pega.http.allowed-hosts=*: the HTTP port answers to any Host name, so a web page can reach it"
                    + " through DNS rebinding; list the names a proxy forwards instead (docs/security.md)");
        }
        return factory -> factory.addEngineValves(
                new SocketPeerValve(),
                new BrowserGuardValve(hosts, clock.getIfUnique(Clock::systemUTC)),
                new AdmissionValve(access));
    }

    @Bean
    ShutdownCoordinator shutdownCoordinator(ConfigurableApplicationContext context) {
        return new ShutdownCoordinator(context);
    }

    @Bean
    CatalogMeters catalogMeters(MeterRegistry registry) {
        return new CatalogMeters(registry);
    }
}
