package io.pegaflow.edge.metrics;

import java.util.Map;

/**
 * One meter's value at the time it was read, for an admin API. For a {@link MetricType#TIMER}, {@code value} is the
 * number of recorded events and {@code totalSeconds}/{@code maxSeconds} their sum and recent maximum; for gauges and
 * counters both are 0.
 *
 * @param name the Prometheus series name ({@link MetricDescriptor#seriesName()})
 * @param labels label values of this meter, by label name
 */
public record MetricReading(
        String name,
        MetricType type,
        String unit,
        String help,
        Map<String, String> labels,
        double value,
        double totalSeconds,
        double maxSeconds) {

    public MetricReading {
        labels = Map.copyOf(labels);
    }
}
