package io.pegaflow.edge.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * Registers meters from catalog entries only: the name, help text and buckets come from the {@link MetricDescriptor},
 * and the label names given at registration must be exactly the entry's {@link MetricDescriptor#labels()}, in order,
 * or registration fails with a message naming the meter. Thread-safe (Micrometer's registry is).
 */
public final class CatalogMeters {

    private final MeterRegistry registry;

    public CatalogMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    /** A gauge reading {@code value} from {@code source} at scrape time; {@code source} is held strongly. */
    public <T> void gauge(MetricDescriptor metric, T source, ToDoubleFunction<T> value, String... labelValues) {
        require(metric, MetricType.GAUGE);
        Gauge.builder(metric.meterName(), source, value)
                .description(metric.help())
                .tags(tags(metric, labelValues))
                .strongReference(true)
                .register(registry);
    }

    /** A counter whose count is read from {@code source} at scrape time (the source counts, the registry reads). */
    public <T> void countOf(MetricDescriptor metric, T source, ToDoubleFunction<T> count, String... labelValues) {
        require(metric, MetricType.COUNTER);
        FunctionCounter.builder(metric.meterName(), source, count)
                .description(metric.help())
                .tags(tags(metric, labelValues))
                .register(registry);
    }

    /** A counter the caller increments; the same entry and label values always return the same counter. */
    public Counter counter(MetricDescriptor metric, String... labelValues) {
        require(metric, MetricType.COUNTER);
        return Counter.builder(metric.meterName())
                .description(metric.help())
                .tags(tags(metric, labelValues))
                .register(registry);
    }

    /** A timer with the entry's buckets; the same entry and label values always return the same timer. */
    public Timer timer(MetricDescriptor metric, String... labelValues) {
        require(metric, MetricType.TIMER);
        return Timer.builder(metric.meterName())
                .description(metric.help())
                .tags(tags(metric, labelValues))
                .serviceLevelObjectives(metric.buckets().toArray(Duration[]::new))
                .register(registry);
    }

    /** Starts timing on the registry's clock (so no caller reads the system clock itself). */
    public Timer.Sample startTiming() {
        return Timer.start(registry);
    }

    private static void require(MetricDescriptor metric, MetricType type) {
        if (metric.type() != type) {
            throw new IllegalArgumentException(
                    metric.meterName() + " is a " + metric.type() + " in the catalog, not a " + type);
        }
    }

    /** {@code labelValues} are the values of {@link MetricDescriptor#labels()}, in that order. */
    private static Tags tags(MetricDescriptor metric, String... labelValues) {
        List<String> labels = metric.labels();
        if (labelValues.length != labels.size()) {
            throw new IllegalArgumentException(
                    metric.meterName() + " takes the labels " + labels + ", got " + labelValues.length + " values");
        }
        List<String> keyValues = new ArrayList<>(labels.size() * 2);
        for (int i = 0; i < labelValues.length; i++) {
            keyValues.add(labels.get(i));
            keyValues.add(labelValues[i]);
        }
        return Tags.of(keyValues.toArray(String[]::new));
    }
}
