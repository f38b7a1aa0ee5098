package io.pegaflow.metaserver.web;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pegaflow.metaserver.index.BlockOwnerIndex;
import io.pegaflow.metaserver.index.LifecycleSweeper;
import io.pegaflow.metaserver.node.MetaserverEpoch;
import io.pegaflow.metaserver.node.NodeRegistry;
import java.time.Clock;
import org.springframework.stereotype.Component;

/**
 * The metaserver's state metrics. Names follow the reference (spec/cluster.md §1.9) so its dashboards keep working;
 * {@code index_evicted}, {@code takeovers} and {@code epoch} are ours. RPC metrics come from
 * {@code RpcMetricsInterceptor}.
 */
@Component
class MetaserverMeterBinder implements MeterBinder {

    private final BlockOwnerIndex index;
    private final NodeRegistry registry;
    private final LifecycleSweeper sweeper;
    private final MetaserverEpoch epoch;
    private final Clock clock;

    MetaserverMeterBinder(
            BlockOwnerIndex index,
            NodeRegistry registry,
            LifecycleSweeper sweeper,
            MetaserverEpoch epoch,
            Clock clock) {
        this.index = index;
        this.registry = registry;
        this.sweeper = sweeper;
        this.epoch = epoch;
        this.clock = clock;
    }

    @Override
    public void bindTo(MeterRegistry meters) {
        Gauge.builder("pegaflow.metaserver.store.entries", index, BlockOwnerIndex::keyCount)
                .description("Block keys in the owner index")
                .register(meters);
        Gauge.builder("pegaflow.metaserver.block.owners", index, BlockOwnerIndex::ownerCount)
                .description("Owner records across all block keys")
                .register(meters);
        Gauge.builder("pegaflow.metaserver.nodes", registry, r -> r.liveAndStaleCounts(clock.millis())[0])
                .description("Registered nodes by liveness")
                .tag("state", "active")
                .register(meters);
        Gauge.builder("pegaflow.metaserver.nodes", registry, r -> r.liveAndStaleCounts(clock.millis())[1])
                .description("Registered nodes by liveness")
                .tag("state", "stale")
                .register(meters);
        Gauge.builder("pegaflow.metaserver.epoch", epoch, MetaserverEpoch::epoch)
                .description("Start epoch of this metaserver process")
                .register(meters);
        FunctionCounter.builder("pegaflow.metaserver.sweep.removed.owners", sweeper, LifecycleSweeper::removedOwners)
                .description("Owner records removed by the TTL sweep")
                .register(meters);
        FunctionCounter.builder("pegaflow.metaserver.sweep.removed.keys", sweeper, LifecycleSweeper::removedKeys)
                .description("Block keys removed by the TTL sweep")
                .register(meters);
        FunctionCounter.builder("pegaflow.metaserver.sweep.removed.nodes", sweeper, LifecycleSweeper::removedNodes)
                .description("Node sessions removed by the TTL sweep")
                .register(meters);
        FunctionCounter.builder("pegaflow.metaserver.index.evicted", index, BlockOwnerIndex::evictedKeys)
                .description("Block keys evicted because the index reached pega.metaserver.max-blocks")
                .register(meters);
        FunctionCounter.builder("pegaflow.metaserver.takeovers", registry, NodeRegistry::takeovers)
                .description("Node addresses taken over by a new node_id after the old session went stale")
                .register(meters);
    }
}
