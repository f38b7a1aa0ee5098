package io.pegaflow.edge.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A read-only view of an app's catalog meters for its admin API: the current value of every registered meter of the
 * catalog, in catalog order. It reads the registry and never creates or changes a meter. Thread-safe.
 */
public final class MetricsView {

    private final MeterRegistry registry;
    private final List<MetricDescriptor> catalog;

    public MetricsView(MeterRegistry registry, List<? extends MetricDescriptor> catalog) {
        this.registry = registry;
        this.catalog = List.copyOf(catalog);
    }

    /** The catalog this view reads, in order (entries with no registered meter included). */
    public List<MetricDescriptor> catalog() {
        return catalog;
    }

    /** Every registered meter of the catalog with its current value. */
    public List<MetricReading> read() {
        List<MetricReading> out = new ArrayList<>();
        for (MetricDescriptor metric : catalog) {
            out.addAll(read(metric));
        }
        return out;
    }

    /** The meters of one entry (one per label combination). */
    public List<MetricReading> read(MetricDescriptor metric) {
        List<MetricReading> out = new ArrayList<>();
        for (Meter meter : registry.find(metric.meterName()).meters()) {
            out.add(reading(metric, meter));
        }
        return out;
    }

    private static MetricReading reading(MetricDescriptor metric, Meter meter) {
        Map<String, String> labels = new LinkedHashMap<>();
        for (Tag tag : meter.getId().getTags()) {
            labels.put(tag.getKey(), tag.getValue());
        }
        double value = 0;
        double total = 0;
        double max = 0;
        if (meter instanceof Gauge g) {
            value = g.value();
        } else if (meter instanceof FunctionCounter c) {
            value = c.count();
        } else if (meter instanceof Counter c) {
            value = c.count();
        } else if (meter instanceof Timer t) {
            value = t.count();
            total = t.totalTime(TimeUnit.SECONDS);
            max = t.max(TimeUnit.SECONDS);
        }
        return new MetricReading(
                metric.seriesName(), metric.type(), metric.unit(), metric.help(), labels, value, total, max);
    }
}
