package io.pegaflow.metaserver.metrics;

import io.pegaflow.edge.metrics.MetricDescriptor;
import io.pegaflow.edge.metrics.MetricType;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The metaserver's metric catalog: every meter it exports, with its type, unit, labels and help. The meter name is the
 * constant's name in lower case, the reference's {@code pegaflow_metaserver_*} name where one exists, so its dashboards
 * keep working. {@code docs/metrics.md} lists exactly these entries (checked by {@code MetricsDocsTest}).
 * {@link MetaserverMeterBinder} registers the catalog; the RPC entries are the edge's interceptor's.
 */
public enum MetaserverMetric implements MetricDescriptor {
    // RPCs
    PEGAFLOW_METASERVER_RPC_REQUESTS(MetricType.COUNTER, "requests", "MetaServer RPCs handled", Labels.RPC),
    PEGAFLOW_METASERVER_RPC_DURATION(
            MetricType.TIMER, "seconds", "MetaServer RPC handling time", Labels.RPC, Buckets.RPC),
    // Overload (ours): calls whose method never ran
    PEGAFLOW_METASERVER_CALLS_SHED(
            MetricType.COUNTER,
            "calls",
            "Calls answered RESOURCE_EXHAUSTED unrun: they waited past pega.metaserver.calls.max-queue-wait-ms",
            Labels.METHOD),
    PEGAFLOW_METASERVER_CALLS_SKIPPED(
            MetricType.COUNTER,
            "calls",
            "Calls whose method was skipped: they were cancelled (deadline or client) while they waited for a worker",
            Labels.METHOD),

    // Index and nodes: the reference's names; index_evicted, takeovers and epoch are ours
    PEGAFLOW_METASERVER_STORE_ENTRIES(MetricType.GAUGE, "keys", "Block keys in the owner index"),
    PEGAFLOW_METASERVER_BLOCK_OWNERS(MetricType.GAUGE, "records", "Owner records across all block keys"),
    PEGAFLOW_METASERVER_NODES(MetricType.GAUGE, "nodes", "Registered nodes by liveness", Labels.STATE),
    PEGAFLOW_METASERVER_EPOCH(MetricType.GAUGE, "epoch", "Start epoch of this metaserver process"),
    PEGAFLOW_METASERVER_SWEEP_REMOVED_OWNERS(MetricType.COUNTER, "records", "Owner records removed by the TTL sweep"),
    PEGAFLOW_METASERVER_SWEEP_REMOVED_KEYS(MetricType.COUNTER, "keys", "Block keys removed by the TTL sweep"),
    PEGAFLOW_METASERVER_SWEEP_REMOVED_NODES(MetricType.COUNTER, "sessions", "Node sessions removed by the TTL sweep"),
    PEGAFLOW_METASERVER_INDEX_EVICTED(
            MetricType.COUNTER, "keys", "Block keys evicted because the index reached pega.metaserver.max-blocks"),
    PEGAFLOW_METASERVER_NODE_SHARE_EVICTED(
            MetricType.COUNTER,
            "records",
            "Owner records a node lost to its own newer inserts past pega.metaserver.node-share"),
    PEGAFLOW_METASERVER_TAKEOVERS(
            MetricType.COUNTER,
            "events",
            "Node addresses taken over by a new node_id after the old session went stale");

    /** Label sets used by the catalog. */
    private static final class Labels {
        static final List<String> NONE = List.of();
        static final List<String> RPC = List.of("method", "status");
        static final List<String> METHOD = List.of("method");
        static final List<String> STATE = List.of("state");
    }

    /** Histogram buckets, as the reference's exporter has them. */
    private static final class Buckets {
        static final List<Duration> NONE = List.of();
        static final List<Duration> RPC = List.of(
                Duration.ofNanos(500_000),
                Duration.ofMillis(1),
                Duration.ofMillis(2),
                Duration.ofMillis(5),
                Duration.ofMillis(10),
                Duration.ofMillis(20),
                Duration.ofMillis(50),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofMillis(500),
                Duration.ofSeconds(1),
                Duration.ofSeconds(2));
    }

    private final MetricType type;
    private final String unit;
    private final String help;

    @SuppressWarnings("ImmutableEnumChecker") // always one of the List.of(...) constants above: unmodifiable
    private final List<String> labels;

    @SuppressWarnings("ImmutableEnumChecker") // always one of the List.of(...) constants above: unmodifiable
    private final List<Duration> buckets;

    MetaserverMetric(MetricType type, String unit, String help) {
        this(type, unit, help, Labels.NONE, Buckets.NONE);
    }

    MetaserverMetric(MetricType type, String unit, String help, List<String> labels) {
        this(type, unit, help, labels, Buckets.NONE);
    }

    MetaserverMetric(MetricType type, String unit, String help, List<String> labels, List<Duration> buckets) {
        this.type = type;
        this.unit = unit;
        this.help = help;
        this.labels = labels;
        this.buckets = buckets;
    }

    @Override
    public String meterName() {
        return name().toLowerCase(Locale.ROOT);
    }

    @Override
    public MetricType type() {
        return type;
    }

    @Override
    public String unit() {
        return unit;
    }

    @Override
    public List<String> labels() {
        return labels;
    }

    @Override
    public String help() {
        return help;
    }

    @Override
    public List<Duration> buckets() {
        return buckets;
    }
}
