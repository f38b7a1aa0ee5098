package io.pegaflow.server.startup;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.edge.EdgeConfiguration;
import io.pegaflow.server.PegaServerApplication;
import io.pegaflow.server.config.PegaProperties;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.server.internode.MetaserverClientProperties;
import io.pegaflow.server.ssd.SsdProperties;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;

/**
 * The checks that run before anything costly (unknown keys before any bean, the preflight before the pool), and the
 * summary logged once the server is ready.
 */
@Configuration(proxyBeanMethods = false)
class StartupConfiguration {

    @Bean
    static UnknownPropertiesCheck unknownPropertiesCheck() {
        return new UnknownPropertiesCheck(
                PegaServerApplication.class.getPackageName(), EdgeConfiguration.class.getPackageName());
    }

    @Bean
    StartupSummary startupSummary(
            ObjectProvider<PegaEngine> engine,
            ObjectProvider<SsdStore> ssd,
            PegaProperties pega,
            MetaserverClientProperties metaserver,
            GrpcPort grpcPort,
            ConfigurableEnvironment env) {
        return new StartupSummary(engine, ssd, pega, metaserver, grpcPort, env);
    }

    @Bean
    ShutdownLog shutdownLog(PegaProperties pega) {
        return new ShutdownLog(pega.pool().size().toBytes());
    }

    @Bean
    StartupPreflight startupPreflight(
            PegaProperties pega, SsdProperties ssd, MetaserverClientProperties metaserver, Environment env) {
        return new StartupPreflight(pega, ssd, metaserver, env, HostMemory.read());
    }
}
