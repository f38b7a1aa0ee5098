package io.pegaflow.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Every counter is its own cell: writing one moves exactly that one in the read-only view. */
class EngineMetricsTest {

    @Test
    void shouldReadEachCounterBackThroughTheViewAlone() {
        EngineMetrics metrics = new EngineMetrics();
        EngineMetricsView view = metrics;
        EngineCounter[] counters = EngineCounter.values();
        for (int i = 0; i < counters.length; i++) {
            metrics.add(counters[i], 10L + i);
        }
        metrics.increment(EngineCounter.LOAD_FAILURES);
        for (int i = 0; i < counters.length; i++) {
            long expected = 10L + i + (counters[i] == EngineCounter.LOAD_FAILURES ? 1 : 0);
            assertThat(view.count(counters[i])).as(counters[i].name()).isEqualTo(expected);
        }
        assertThat(view.inflightBytes()).isZero();
    }

    @Test
    void shouldTrackTheInflightLevelBothWays() {
        EngineMetrics metrics = new EngineMetrics();
        metrics.addInflightBytes(4096);
        metrics.addInflightBytes(512);
        metrics.addInflightBytes(-4096);
        assertThat(metrics.inflightBytes()).isEqualTo(512);
        for (EngineCounter c : EngineCounter.values()) {
            assertThat(metrics.count(c)).as(c.name()).isZero();
        }
    }

    @Test
    void shouldExposeTheDashboardTiersBeforeAnyQuery() {
        EngineMetrics metrics = new EngineMetrics();
        assertThat(metrics.tierNames()).containsExactlyInAnyOrder("ram", "ssd", "rdma", "miss");
        metrics.countTierRequests("ssd", 3);
        assertThat(metrics.tierRequests("ssd")).isEqualTo(3);
        assertThat(metrics.tierRequests("never-seen")).isZero();
    }
}
