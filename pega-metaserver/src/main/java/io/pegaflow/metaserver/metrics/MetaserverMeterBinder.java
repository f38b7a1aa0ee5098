package io.pegaflow.metaserver.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.metaserver.index.BlockIndex;
import io.pegaflow.metaserver.index.LifecycleSweeper;
import io.pegaflow.metaserver.node.MetaserverEpoch;
import io.pegaflow.metaserver.node.NodeRegistry;
import java.time.Clock;

/**
 * The metaserver's one binder: registers every {@link MetaserverMetric} of its state, read at scrape time. The RPC
 * entries are registered by the edge's interceptor as calls arrive.
 */
final class MetaserverMeterBinder implements MeterBinder {

    private final BlockIndex index;
    private final NodeRegistry registry;
    private final LifecycleSweeper sweeper;
    private final MetaserverEpoch epoch;
    private final Clock clock;

    MetaserverMeterBinder(
            BlockIndex index, NodeRegistry registry, LifecycleSweeper sweeper, MetaserverEpoch epoch, Clock clock) {
        this.index = index;
        this.registry = registry;
        this.sweeper = sweeper;
        this.epoch = epoch;
        this.clock = clock;
    }

    @Override
    public void bindTo(MeterRegistry meterRegistry) {
        CatalogMeters m = new CatalogMeters(meterRegistry);
        m.gauge(MetaserverMetric.PEGAFLOW_METASERVER_STORE_ENTRIES, index, BlockIndex::keyCount);
        m.gauge(MetaserverMetric.PEGAFLOW_METASERVER_BLOCK_OWNERS, index, BlockIndex::ownerCount);
        m.gauge(
                MetaserverMetric.PEGAFLOW_METASERVER_NODES,
                registry,
                r -> r.liveAndStaleCounts(clock.millis())[0],
                "active");
        m.gauge(
                MetaserverMetric.PEGAFLOW_METASERVER_NODES,
                registry,
                r -> r.liveAndStaleCounts(clock.millis())[1],
                "stale");
        m.gauge(MetaserverMetric.PEGAFLOW_METASERVER_EPOCH, epoch, MetaserverEpoch::epoch);
        m.countOf(MetaserverMetric.PEGAFLOW_METASERVER_SWEEP_REMOVED_OWNERS, sweeper, LifecycleSweeper::removedOwners);
        m.countOf(MetaserverMetric.PEGAFLOW_METASERVER_SWEEP_REMOVED_KEYS, sweeper, LifecycleSweeper::removedKeys);
        m.countOf(MetaserverMetric.PEGAFLOW_METASERVER_SWEEP_REMOVED_NODES, sweeper, LifecycleSweeper::removedNodes);
        m.countOf(MetaserverMetric.PEGAFLOW_METASERVER_INDEX_EVICTED, index, BlockIndex::evictedKeys);
        m.countOf(MetaserverMetric.PEGAFLOW_METASERVER_NODE_SHARE_EVICTED, index, BlockIndex::shareEvictedRecords);
        m.countOf(MetaserverMetric.PEGAFLOW_METASERVER_TAKEOVERS, registry, NodeRegistry::takeovers);
    }
}
