package io.pegaflow.edge.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Meters exist only as the catalog describes them, and the view reads them back without changing them. */
@Timeout(30)
class CatalogMetersTest {

    enum Sample implements MetricDescriptor {
        PEGAFLOW_SAMPLE_USED_BYTES(MetricType.GAUGE, List.of()),
        PEGAFLOW_SAMPLE_ERRORS(MetricType.COUNTER, List.of("kind")),
        PEGAFLOW_SAMPLE_DURATION(MetricType.TIMER, List.of());

        private final MetricType type;

        @SuppressWarnings("ImmutableEnumChecker") // always a List.of(...): unmodifiable
        private final List<String> labels;

        Sample(MetricType type, List<String> labels) {
            this.type = type;
            this.labels = labels;
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
            return "things";
        }

        @Override
        public List<String> labels() {
            return labels;
        }

        @Override
        public String help() {
            return "help of " + name();
        }

        @Override
        public List<Duration> buckets() {
            return List.of(Duration.ofMillis(1));
        }
    }

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final CatalogMeters meters = new CatalogMeters(registry);

    @Test
    void shouldRefuseLabelsOtherThanTheCatalogs() {
        assertThatThrownBy(() -> meters.counter(Sample.PEGAFLOW_SAMPLE_ERRORS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("pegaflow_sample_errors takes the labels [kind], got 0 values");
        assertThatThrownBy(() -> meters.timer(Sample.PEGAFLOW_SAMPLE_DURATION, "extra"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRefuseAMeterOfAnotherType() {
        assertThatThrownBy(() -> meters.counter(Sample.PEGAFLOW_SAMPLE_USED_BYTES))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("pegaflow_sample_used_bytes is a GAUGE in the catalog, not a COUNTER");
    }

    @Test
    void shouldNameSeriesAsPrometheusShowsThem() {
        assertThat(Sample.PEGAFLOW_SAMPLE_USED_BYTES.seriesName()).isEqualTo("pegaflow_sample_used_bytes");
        assertThat(Sample.PEGAFLOW_SAMPLE_ERRORS.seriesName()).isEqualTo("pegaflow_sample_errors_total");
        assertThat(Sample.PEGAFLOW_SAMPLE_DURATION.seriesName()).isEqualTo("pegaflow_sample_duration_seconds");
    }

    @Test
    void shouldReadEveryRegisteredMeterOfTheCatalogBack() {
        AtomicLong used = new AtomicLong(4096);
        meters.gauge(Sample.PEGAFLOW_SAMPLE_USED_BYTES, used, AtomicLong::get);
        meters.counter(Sample.PEGAFLOW_SAMPLE_ERRORS, "io").increment(3);
        meters.timer(Sample.PEGAFLOW_SAMPLE_DURATION).record(250, TimeUnit.MILLISECONDS);
        MetricsView view = new MetricsView(registry, List.of(Sample.values()));

        List<MetricReading> readings = view.read();

        assertThat(readings).hasSize(3);
        assertThat(readings.get(0))
                .isEqualTo(new MetricReading(
                        "pegaflow_sample_used_bytes",
                        MetricType.GAUGE,
                        "things",
                        "help of PEGAFLOW_SAMPLE_USED_BYTES",
                        java.util.Map.of(),
                        4096,
                        0,
                        0));
        assertThat(readings.get(1).labels()).containsEntry("kind", "io");
        assertThat(readings.get(1).value()).isEqualTo(3);
        assertThat(readings.get(2).value()).isEqualTo(1);
        assertThat(readings.get(2).totalSeconds()).isEqualTo(0.25);
        used.set(8192);
        assertThat(view.read(Sample.PEGAFLOW_SAMPLE_USED_BYTES).get(0).value()).isEqualTo(8192);
    }
}
