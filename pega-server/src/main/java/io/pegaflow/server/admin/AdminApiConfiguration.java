package io.pegaflow.server.admin;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.ssd.SsdStore;
import java.time.Clock;
import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The admin API's history sampler; the controller and the dashboard's assets need nothing else. */
@Configuration(proxyBeanMethods = false)
class AdminApiConfiguration {

    @Bean(destroyMethod = "close")
    ThroughputHistory throughputHistory(PegaEngine engine, ObjectProvider<SsdStore> ssd) {
        return new ThroughputHistory(engine, Optional.ofNullable(ssd.getIfAvailable()), Clock.systemUTC()).start();
    }
}
