package io.pegaflow.bench.loadgen;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * A self-contained SVG of stacked line charts, written by hand (no plotting dependency). The latency chart is the
 * usual HdrHistogram percentile-distribution plot: x is {@code log10(1 / (1 - p))}, so 90%, 99%, 99.9% and 99.99%
 * are evenly spaced and the tail is visible.
 */
public final class SvgPlot {
    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"
    };
    private static final int PLOT_WIDTH = 620;
    private static final int PANEL_HEIGHT = 340;
    private static final int LEFT = 80;
    private static final double LEGEND_CHAR_WIDTH = 7;
    private static final int TOP = 50;
    private static final int BOTTOM = 50;
    private static final double MAX_NINES = 5; // 99.999%

    /** One line: points in data coordinates. */
    public record Series(String name, double[] x, double[] y) {}

    /** One chart; {@code percentileX} draws the x axis as percentile ticks. */
    public record Panel(String title, String yLabel, String xLabel, boolean percentileX, List<Series> series) {}

    private SvgPlot() {}

    /** The percentile-distribution series of each non-empty histogram (values in µs, drawn in ms). */
    public static List<Series> percentileSeries(Map<String, Histogram> histograms) {
        List<Series> out = new ArrayList<>();
        histograms.forEach((name, h) -> {
            if (h.getTotalCount() == 0) {
                return;
            }
            List<double[]> points = new ArrayList<>();
            for (HistogramIterationValue v : h.percentiles(5)) {
                double p = v.getPercentileLevelIteratedTo() / 100.0;
                double x = p >= 1 ? MAX_NINES : Math.min(MAX_NINES, Math.log10(1 / (1 - p)));
                points.add(new double[] {x, h.highestEquivalentValue(v.getValueIteratedTo()) / 1000.0});
                if (x >= MAX_NINES) {
                    break;
                }
            }
            double[] xs = new double[points.size()];
            double[] ys = new double[points.size()];
            for (int i = 0; i < xs.length; i++) {
                xs[i] = points.get(i)[0];
                ys[i] = points.get(i)[1];
            }
            out.add(new Series(name + " (n=" + h.getTotalCount() + ")", xs, ys));
        });
        return out;
    }

    public static String render(String title, String subtitle, List<Panel> panels) {
        int longest = 0;
        for (Panel p : panels) {
            for (Series s : p.series()) {
                longest = Math.max(longest, s.name().length());
            }
        }
        int legend = (int) Math.ceil(50 + LEGEND_CHAR_WIDTH * longest);
        int width = Math.max(LEFT + PLOT_WIDTH + legend, LEFT + 7 * subtitle.length());
        int height = TOP + panels.size() * PANEL_HEIGHT + 10;
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                        + " font-family=\"sans-serif\" font-size=\"12\">\n",
                width,
                height,
                width,
                height));
        sb.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height));
        sb.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"22\" font-size=\"16\" font-weight=\"bold\">%s</text>\n",
                LEFT,
                esc(title)));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"40\" fill=\"#555\">%s</text>\n", LEFT, esc(subtitle)));
        for (int i = 0; i < panels.size(); i++) {
            panel(sb, panels.get(i), TOP + i * PANEL_HEIGHT);
        }
        return sb.append("</svg>\n").toString();
    }

    private static void panel(StringBuilder sb, Panel p, int top) {
        int x0 = LEFT;
        int x1 = LEFT + PLOT_WIDTH;
        int y0 = top + PANEL_HEIGHT - BOTTOM;
        int y1 = top + 30;
        double minX = p.percentileX() ? 0 : Double.MAX_VALUE;
        double maxX = p.percentileX() ? MAX_NINES : -Double.MAX_VALUE;
        double maxY = 0;
        for (Series s : p.series()) {
            for (int i = 0; i < s.x().length; i++) {
                if (!p.percentileX()) {
                    minX = Math.min(minX, s.x()[i]);
                    maxX = Math.max(maxX, s.x()[i]);
                }
                maxY = Math.max(maxY, s.y()[i]);
            }
        }
        if (minX >= maxX) {
            minX = 0;
            maxX = Math.max(1, maxX);
        }
        maxY = niceCeiling(maxY <= 0 ? 1 : maxY * 1.05);
        sb.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">%s</text>\n",
                x0,
                top + 18,
                esc(p.title())));
        sb.append(String.format(
                Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n",
                x0,
                y1,
                x1 - x0,
                y0 - y1));
        for (int t = 0; t <= 5; t++) {
            double v = maxY * t / 5;
            double y = y0 - (y0 - y1) * (double) t / 5;
            sb.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                            + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                    x0,
                    y,
                    x1,
                    y,
                    x0 - 6,
                    y + 4,
                    fmt(v)));
        }
        if (p.percentileX()) {
            String[] labels = {"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"};
            for (int t = 0; t <= MAX_NINES; t++) {
                double x = x0 + (x1 - x0) * t / MAX_NINES;
                sb.append(tick(x, y0, y1, labels[t]));
            }
        } else {
            double step = niceCeiling((maxX - minX) / 6);
            for (double v = Math.ceil(minX / step) * step; v <= maxX + step * 1e-9; v += step) {
                double x = x0 + (x1 - x0) * (v - minX) / (maxX - minX);
                sb.append(tick(x, y0, y1, fmt(v)));
            }
        }
        sb.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                (x0 + x1) / 2,
                y0 + 36,
                esc(p.xLabel())));
        sb.append(String.format(
                Locale.ROOT,
                "<text transform=\"translate(%d,%d) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
                18,
                (y0 + y1) / 2,
                esc(p.yLabel())));
        for (int s = 0; s < p.series().size(); s++) {
            Series series = p.series().get(s);
            String color = COLORS[s % COLORS.length];
            StringBuilder points = new StringBuilder();
            for (int i = 0; i < series.x().length; i++) {
                double x = x0 + (x1 - x0) * (series.x()[i] - minX) / (maxX - minX);
                double y = y0 - (y0 - y1) * Math.min(1, series.y()[i] / maxY);
                points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
            }
            sb.append(String.format(
                    Locale.ROOT,
                    "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n",
                    color,
                    points.toString().trim()));
            int ly = y1 + 10 + s * 18;
            sb.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>"
                            + "<text x=\"%d\" y=\"%d\">%s</text>\n",
                    x1 + 10,
                    ly,
                    x1 + 30,
                    ly,
                    color,
                    x1 + 36,
                    ly + 4,
                    esc(series.name())));
        }
    }

    private static String tick(double x, int y0, int y1, String label) {
        return String.format(
                Locale.ROOT,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                        + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                x,
                y1,
                x,
                y0,
                x,
                y0 + 16,
                esc(label));
    }

    /** The smallest 1, 2 or 5 × 10^k at or above {@code v}. */
    static double niceCeiling(double v) {
        double exp = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 5, 10}) {
            if (m * exp >= v) {
                return m * exp;
            }
        }
        return 10 * exp;
    }

    private static String fmt(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e6) {
            return Long.toString((long) v);
        }
        return String.format(Locale.ROOT, Math.abs(v) >= 10 ? "%.1f" : "%.2f", v);
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
