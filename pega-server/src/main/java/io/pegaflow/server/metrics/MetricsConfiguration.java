package io.pegaflow.server.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.edge.metrics.MetricsView;
import io.pegaflow.server.internode.MetaserverClient;
import java.util.List;
import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The server's metrics: the one binder of its catalog ({@link ServerMetric}) and the read-only {@link MetricsView}
 * that an admin API serves. See {@code docs/metrics.md}.
 */
@Configuration(proxyBeanMethods = false)
public class MetricsConfiguration {

    /** Binds the entries of the subsystems this context has (a context may lack the engine, as in tests). */
    @Bean
    ServerMeterBinder serverMeterBinder(
            ObjectProvider<PegaEngine> engine,
            ObjectProvider<SsdStore> ssd,
            ObjectProvider<MetaserverClient> metaserverClient) {
        return new ServerMeterBinder(
                Optional.ofNullable(engine.getIfAvailable()),
                Optional.ofNullable(ssd.getIfAvailable()),
                Optional.ofNullable(metaserverClient.getIfAvailable()));
    }

    /** Current values of every catalog meter, in catalog order; read-only. */
    @Bean
    MetricsView serverMetricsView(MeterRegistry registry) {
        return new MetricsView(registry, List.of(ServerMetric.values()));
    }
}
