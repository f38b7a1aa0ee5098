package io.pegaflow.metaserver.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.pegaflow.edge.metrics.MetricsView;
import io.pegaflow.metaserver.index.BlockIndex;
import io.pegaflow.metaserver.index.LifecycleSweeper;
import io.pegaflow.metaserver.node.MetaserverEpoch;
import io.pegaflow.metaserver.node.NodeRegistry;
import java.time.Clock;
import java.util.List;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The metaserver's metrics: the one binder of its catalog ({@link MetaserverMetric}) and the read-only
 * {@link MetricsView} that an admin API serves. See {@code docs/metrics.md}.
 */
@Configuration(proxyBeanMethods = false)
class MetricsConfiguration {

    @Bean
    MetaserverMeterBinder metaserverMeterBinder(
            BlockIndex index, NodeRegistry registry, LifecycleSweeper sweeper, MetaserverEpoch epoch, Clock clock) {
        return new MetaserverMeterBinder(index, registry, sweeper, epoch, clock);
    }

    /** Current values of every catalog meter, in catalog order; read-only. */
    @Bean
    MetricsView metaserverMetricsView(MeterRegistry registry) {
        return new MetricsView(registry, List.of(MetaserverMetric.values()));
    }
}
