package io.pegaflow.edge.metrics;

/** The kind of a catalog meter and the suffix Prometheus adds to its name. */
public enum MetricType {
    /** A value read at scrape time; the series is the meter name. */
    GAUGE(""),
    /** A monotonic count; Prometheus exposes {@code <name>_total}. */
    COUNTER("_total"),
    /** A latency histogram in seconds; Prometheus exposes {@code <name>_seconds_bucket}, {@code _count}, {@code _sum}. */
    TIMER("_seconds");

    private final String suffix;

    MetricType(String suffix) {
        this.suffix = suffix;
    }

    /** The Prometheus family name of a meter of this type called {@code meterName}. */
    public String seriesName(String meterName) {
        return meterName + suffix;
    }
}
