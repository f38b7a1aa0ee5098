package io.pegaflow.edge.metrics;

import java.time.Duration;
import java.util.List;

/**
 * One entry of an app's metric catalog. Each app has one enum implementing this interface that names every meter it
 * exports; {@link CatalogMeters} builds meters only from such entries, so a meter cannot exist outside the catalog, and
 * {@code docs/metrics.md} is checked against the enum.
 */
public interface MetricDescriptor {

    /**
     * The Micrometer name, {@code snake_case} with the {@code pegaflow_} prefix and without the Prometheus type
     * suffix: {@code pegaflow_save_bytes} is exported as {@code pegaflow_save_bytes_total}.
     */
    String meterName();

    MetricType type();

    /** The unit of the value as the docs show it ({@code bytes}, {@code seconds}, {@code blocks}, ...). */
    String unit();

    /** The label names every meter of this entry carries, in order; empty for an unlabelled meter. */
    List<String> labels();

    /** One line for {@code # HELP} and the docs. */
    String help();

    /** Histogram bucket bounds of a {@link MetricType#TIMER}; empty for other types. */
    default List<Duration> buckets() {
        return List.of();
    }

    /** The name Prometheus shows: {@link #meterName()} plus the suffix of {@link #type()}. */
    default String seriesName() {
        return type().seriesName(meterName());
    }

    /**
     * The sample names a Prometheus scrape shows for this entry: the series itself, or for a timer its
     * {@code _bucket}, {@code _count} and {@code _sum} samples and Micrometer's {@code _max} gauge.
     */
    default List<String> sampleNames() {
        String series = seriesName();
        return type() == MetricType.TIMER
                ? List.of(series + "_count", series + "_sum", series + "_bucket", series + "_max")
                : List.of(series);
    }
}
