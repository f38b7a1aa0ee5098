package io.pegaflow.metaserver.metrics;

import io.pegaflow.edge.metrics.MetricDescriptor;
import io.pegaflow.edge.metrics.MetricType;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The metaserver's metric catalog: every meter it exports, with its type, unit, labels and help. The meter name is
 * the constant's name in lower case, the reference's {@code pegaflow_metaserver_*} name where one exists
 * (spec/cluster.md §1.9), so its dashboards keep working. {@code docs/metrics.md} lists exactly these entries
 * (checked by {@code MetricsDocsTest}).
 */
public enum MetaserverMetric implements MetricDescriptor {
    PEGAFLOW_METASERVER_RPC_REQUESTS(MetricType.COUNTER, "requests", "MetaServer RPCs handled", Labels.RPC),
    PEGAFLOW_METASERVER_RPC_DURATION(
            MetricType.TIMER, "seconds", "MetaServer RPC handling time", Labels.RPC, Buckets.RPC);

    /** Label sets used by the catalog. */
    private static final class Labels {
        static final List<String> RPC = List.of("method", "status");
    }

    /** Histogram buckets, as the reference's exporter has them (spec/cluster.md §1.9). */
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
