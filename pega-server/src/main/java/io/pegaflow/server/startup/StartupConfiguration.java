package io.pegaflow.server.startup;

import io.pegaflow.server.PegaServerApplication;
import io.pegaflow.server.config.PegaProperties;
import io.pegaflow.server.internode.MetaserverClientProperties;
import io.pegaflow.server.ssd.SsdProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/** The checks that run before anything costly: unknown keys before any bean, the preflight before the pool. */
@Configuration(proxyBeanMethods = false)
class StartupConfiguration {

    @Bean
    static UnknownPropertiesCheck unknownPropertiesCheck() {
        return new UnknownPropertiesCheck(PegaServerApplication.class.getPackageName());
    }

    @Bean
    StartupPreflight startupPreflight(
            PegaProperties pega, SsdProperties ssd, MetaserverClientProperties metaserver, Environment env) {
        return new StartupPreflight(pega, ssd, metaserver, env, HostMemory.read());
    }
}
