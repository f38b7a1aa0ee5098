package io.pegaflow.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class ReportFormatsTest {

    @Test
    @SuppressWarnings("unchecked")
    void shouldWriteJsonThatReadsBackWithRoundedDoublesAndNullForNaN() {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("name", "a \"quoted\"\nline");
        root.put("n", 42L);
        root.put("x", 0.1234567);
        root.put("big", 123456789.0);
        root.put("nan", Double.NaN);
        root.put("list", List.of(1, "two", true));
        root.put("empty", Map.of());

        String json = Json.write(root);
        Map<String, Object> back = (Map<String, Object>) Json.read(json);

        assertThat(back.keySet()).containsExactly("name", "n", "x", "big", "nan", "list", "empty");
        assertThat(back.get("name")).isEqualTo("a \"quoted\"\nline");
        assertThat(((Number) back.get("n")).longValue()).isEqualTo(42);
        assertThat(((Number) back.get("x")).doubleValue()).isEqualTo(0.123457);
        assertThat(json).contains("123457000").doesNotContain("E+");
        assertThat(back.get("nan")).isNull();
        assertThat(back.get("list")).isEqualTo(List.of(1, "two", true));
        assertThat(back.get("empty")).isEqualTo(Map.of());
    }

    @Test
    void shouldDrawOneLinePerNonEmptyHistogram() {
        Histogram fast = new Histogram(Stats.HIGHEST_US, 3);
        Histogram slow = new Histogram(Stats.HIGHEST_US, 3);
        Histogram empty = new Histogram(Stats.HIGHEST_US, 3);
        for (int i = 1; i <= 1000; i++) {
            fast.recordValue(i);
            slow.recordValue(10L * i);
        }
        Map<String, Histogram> named = new LinkedHashMap<>();
        named.put("Save", fast);
        named.put("Load", slow);
        named.put("Release", empty);

        List<SvgPlot.Series> series = SvgPlot.percentileSeries(named);
        String svg =
                SvgPlot.render("t <&>", "s", List.of(new SvgPlot.Panel("latency", "ms", "percentile", true, series)));

        assertThat(series).hasSize(2);
        assertThat(series.get(1).y()[series.get(1).y().length - 1])
                .isCloseTo(10.0, org.assertj.core.api.Assertions.within(0.1));
        assertThat(svg)
                .startsWith("<svg")
                .endsWith("</svg>\n")
                .contains("t &lt;&amp;&gt;")
                .contains("99.9%");
        assertThat(svg.split("<polyline", -1)).hasSize(3);
    }

    @Test
    void shouldRenderTheProgressBar() {
        assertThat(ProgressBar.render(0.5, "x")).startsWith("[##############>.............]  50%  x");
        assertThat(ProgressBar.render(2, "")).contains("100%");
    }

    @Test
    void shouldRoundPlotScalesToNiceNumbers() {
        assertThat(SvgPlot.niceCeiling(0.7)).isEqualTo(1.0);
        assertThat(SvgPlot.niceCeiling(13)).isEqualTo(20.0);
        assertThat(SvgPlot.niceCeiling(4.2)).isEqualTo(5.0);
    }
}
