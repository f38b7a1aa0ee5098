package io.pegaflow.core.ssd;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Counters, levels and error kinds are separate cells, read back through the read-only view alone. */
class SsdMetricsTest {

    @Test
    void shouldReadEachCellBackThroughTheView() {
        SsdMetrics metrics = new SsdMetrics();
        SsdMetricsView view = metrics;
        SsdCounter[] counters = SsdCounter.values();
        for (int i = 0; i < counters.length; i++) {
            metrics.add(counters[i], 100L + i);
        }
        SsdGauge[] gauges = SsdGauge.values();
        for (int i = 0; i < gauges.length; i++) {
            metrics.addGauge(gauges[i], 7L + i);
        }
        metrics.addGauge(SsdGauge.WRITE_INFLIGHT, -1);
        metrics.error(SsdErrorKind.CHECKSUM);
        metrics.error(SsdErrorKind.CHECKSUM);

        for (int i = 0; i < counters.length; i++) {
            assertThat(view.count(counters[i])).as(counters[i].name()).isEqualTo(100L + i);
        }
        for (int i = 0; i < gauges.length; i++) {
            long expected = 7L + i - (gauges[i] == SsdGauge.WRITE_INFLIGHT ? 1 : 0);
            assertThat(view.gauge(gauges[i])).as(gauges[i].name()).isEqualTo(expected);
        }
        for (SsdErrorKind kind : SsdErrorKind.values()) {
            assertThat(view.errors(kind)).as(kind.label()).isEqualTo(kind == SsdErrorKind.CHECKSUM ? 2 : 0);
        }
    }

    @Test
    void shouldExportThePrefetchBudgetCellItself() {
        SsdMetrics metrics = new SsdMetrics();
        assertThat(metrics.prefetchReservedCell().compareAndSet(0, 3)).isTrue();
        assertThat(metrics.prefetchReserved()).isEqualTo(3);
        assertThat(metrics.gauge(SsdGauge.PREFETCH_RESERVED)).isEqualTo(3);
    }
}
