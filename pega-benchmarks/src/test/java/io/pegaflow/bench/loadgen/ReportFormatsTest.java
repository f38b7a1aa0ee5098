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
    void shouldWriteValidLookingJson() {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("name", "a \"quoted\"\nline");
        root.put("n", 42L);
        root.put("x", 0.1234567);
        root.put("nan", Double.NaN);
        root.put("list", List.of(1, "two", true));
        root.put("empty", Map.of());

        String json = Json.write(root);

        assertThat(json)
                .contains("\"name\": \"a \\\"quoted\\\"\\nline\"")
                .contains("\"n\": 42")
                .contains("\"x\": 0.123457")
                .contains("\"nan\": null")
                .contains("\"list\": [1, \"two\", true]")
                .contains("\"empty\": {}");
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
