package io.pegaflow.bench.loadgen;

import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/** The end-of-run report of the mix scenario: a text table, a JSON document and an SVG plot. */
final class Report {
    private final LoadGenOptions options;
    private final double seconds;
    private final Stats stats;
    private final Map<Stats.Rpc, Histogram> rpc;
    private final Map<OpMix.Op, Histogram> ops;
    private final List<Stats.Sample> timeline;
    private final String date =
            ZonedDateTime.now(ZoneId.systemDefault()).withNano(0).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);

    Report(LoadGenOptions options, double seconds, Stats stats, List<Stats.Sample> timeline) {
        this.options = options;
        this.seconds = seconds;
        this.stats = stats;
        this.rpc = stats.takeRpcHistograms();
        this.ops = stats.takeOpHistograms();
        this.timeline = timeline;
    }

    double hitRate() {
        long q = stats.queriedBlocks.sum();
        return q == 0 ? Double.NaN : (double) stats.hitBlocks.sum() / q;
    }

    long errors() {
        return stats.errors.sum();
    }

    long verifyFailures() {
        return stats.verifyFailures.sum();
    }

    String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "%nPegaFlow load generator: %s:%d, %d workers, mix %s, %s blocks x %d per request x %d layer(s),"
                        + " %d prefixes, zipf %.2f, rate %s%n",
                options.host(),
                options.port(),
                options.workers(),
                options.mix(),
                Units.formatBytes(options.blockBytes()),
                options.blocksPerRequest(),
                options.layers(),
                options.prefixes(),
                options.zipfExponent(),
                options.rate() == 0 ? "unlimited" : Units.formatRate(options.rate()) + " ops/s"));
        sb.append(String.format(Locale.ROOT, "measured %.1f s, %s%n%n", seconds, date));
        sb.append(String.format(
                Locale.ROOT,
                "%-16s %9s %9s %9s %9s %9s %9s %9s%n",
                "latency (ms)",
                "count",
                "p50",
                "p90",
                "p99",
                "p99.9",
                "max",
                "mean"));
        rpc.forEach((k, h) -> row(sb, k.label, h));
        ops.forEach((k, h) -> row(sb, "op:" + k.label(), h));
        sb.append('\n');
        sb.append(String.format(Locale.ROOT, "%-26s %12s%n", "throughput", "per second"));
        line(sb, "operations", Units.formatRate(stats.ops.sum() / seconds));
        line(sb, "saved blocks (sent)", Units.formatRate(stats.savedBlocks.sum() / seconds));
        line(sb, "saved GB/s (sent)", String.format(Locale.ROOT, "%.3f", stats.savedBytes.sum() / seconds / 1e9));
        line(sb, "loaded blocks", Units.formatRate(stats.loadedBlocks.sum() / seconds));
        line(sb, "loaded GB/s", String.format(Locale.ROOT, "%.3f", stats.loadedBytes.sum() / seconds / 1e9));
        line(sb, "queried blocks", Units.formatRate(stats.queriedBlocks.sum() / seconds));
        sb.append('\n');
        line(
                sb,
                "hit rate (blocks)",
                Double.isNaN(hitRate()) ? "-" : String.format(Locale.ROOT, "%.1f%%", hitRate() * 100));
        line(sb, "verified blocks", Long.toString(stats.verifiedBlocks.sum()));
        line(sb, "verify failures", Long.toString(stats.verifyFailures.sum()));
        line(sb, "loading polls", Long.toString(stats.loadingPolls.sum()));
        line(sb, "errors", Long.toString(stats.errors.sum()));
        if (stats.unavailable.sum() > 0) {
            line(sb, "  of which UNAVAILABLE", Long.toString(stats.unavailable.sum()));
            line(sb, "  backed off (worker s)", String.format(Locale.ROOT, "%.1f", stats.backoffNanos.sum() / 1e9));
        }
        for (String e : stats.errorSamples()) {
            sb.append("  ").append(e).append('\n');
        }
        return sb.toString();
    }

    private static void line(StringBuilder sb, String name, String value) {
        sb.append(String.format(Locale.ROOT, "%-26s %12s%n", name, value));
    }

    private static void row(StringBuilder sb, String name, Histogram h) {
        if (h.getTotalCount() == 0) {
            return;
        }
        sb.append(String.format(
                Locale.ROOT,
                "%-16s %9d %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f%n",
                name,
                h.getTotalCount(),
                ms(h, 50),
                ms(h, 90),
                ms(h, 99),
                ms(h, 99.9),
                h.getMaxValue() / 1000.0,
                h.getMean() / 1000.0));
    }

    private static double ms(Histogram h, double p) {
        return h.getValueAtPercentile(p) / 1000.0;
    }

    static Map<String, Object> latencyJson(Histogram h) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("count", h.getTotalCount());
        m.put("p50", h.getValueAtPercentile(50));
        m.put("p90", h.getValueAtPercentile(90));
        m.put("p99", h.getValueAtPercentile(99));
        m.put("p999", h.getValueAtPercentile(99.9));
        m.put("max", h.getMaxValue());
        m.put("mean", h.getMean());
        return m;
    }

    String json() {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("tool", "pega-loadgen");
        root.put("scenario", "mix");
        root.put("date", date);
        root.put("target", options.host() + ":" + options.port());
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("workers", options.workers());
        config.put("mix", options.mix().toString());
        config.put("block_bytes", options.blockBytes());
        config.put("blocks_per_request", options.blocksPerRequest());
        config.put("layers", options.layers());
        config.put("prefixes", options.prefixes());
        config.put("zipf", options.zipfExponent());
        config.put("rate", options.rate());
        config.put("verify", options.verify());
        config.put("namespace", options.namespace());
        config.put("seed", options.seed());
        config.put("hash_bytes", options.hashBytes());
        root.put("config", config);
        root.put("elapsed_s", seconds);
        Map<String, Object> opCounts = new LinkedHashMap<>();
        for (OpMix.Op op : OpMix.Op.values()) {
            opCounts.put(op.label(), stats.opCount(op));
        }
        root.put("ops", opCounts);
        Map<String, Object> tp = new LinkedHashMap<>();
        tp.put("ops_per_s", stats.ops.sum() / seconds);
        tp.put("saved_blocks_per_s", stats.savedBlocks.sum() / seconds);
        tp.put("saved_GBps", stats.savedBytes.sum() / seconds / 1e9);
        tp.put("loaded_blocks_per_s", stats.loadedBlocks.sum() / seconds);
        tp.put("loaded_GBps", stats.loadedBytes.sum() / seconds / 1e9);
        tp.put("queried_blocks_per_s", stats.queriedBlocks.sum() / seconds);
        root.put("throughput", tp);
        root.put("hit_rate", Double.isNaN(hitRate()) ? null : hitRate());
        root.put("loading_polls", stats.loadingPolls.sum());
        root.put("verify", Map.of("blocks", stats.verifiedBlocks.sum(), "failures", stats.verifyFailures.sum()));
        Map<String, Object> err = new LinkedHashMap<>();
        err.put("count", stats.errors.sum());
        err.put("unavailable", stats.unavailable.sum());
        err.put("backoff_worker_s", stats.backoffNanos.sum() / 1e9);
        err.put("samples", stats.errorSamples());
        root.put("errors", err);
        Map<String, Object> lat = new LinkedHashMap<>();
        rpc.forEach((k, h) -> lat.put(k.label, latencyJson(h)));
        ops.forEach((k, h) -> lat.put("op:" + k.label(), latencyJson(h)));
        root.put("latency_us", lat);
        List<Object> tl = new ArrayList<>();
        Stats.Sample prev = null;
        for (Stats.Sample s : timeline) {
            if (prev != null && s.seconds() > prev.seconds()) {
                double dt = s.seconds() - prev.seconds();
                Map<String, Object> point = new LinkedHashMap<>();
                point.put("t", s.seconds());
                point.put("ops_per_s", (s.ops() - prev.ops()) / dt);
                point.put("saved_GBps", (s.savedBytes() - prev.savedBytes()) / dt / 1e9);
                point.put("loaded_GBps", (s.loadedBytes() - prev.loadedBytes()) / dt / 1e9);
                tl.add(point);
            }
            prev = s;
        }
        root.put("timeline", tl);
        return Json.write(root);
    }

    String svg() {
        Map<String, Histogram> named = new LinkedHashMap<>();
        rpc.forEach((k, h) -> named.put(k.label, h));
        List<SvgPlot.Panel> panels = new ArrayList<>();
        panels.add(new SvgPlot.Panel(
                "RPC latency by percentile", "latency (ms)", "percentile", true, SvgPlot.percentileSeries(named)));
        List<double[]> save = new ArrayList<>();
        List<double[]> load = new ArrayList<>();
        Stats.Sample prev = null;
        for (Stats.Sample s : timeline) {
            if (prev != null && s.seconds() > prev.seconds()) {
                double dt = s.seconds() - prev.seconds();
                save.add(new double[] {s.seconds(), (s.savedBytes() - prev.savedBytes()) / dt / 1e9});
                load.add(new double[] {s.seconds(), (s.loadedBytes() - prev.loadedBytes()) / dt / 1e9});
            }
            prev = s;
        }
        if (!save.isEmpty()) {
            panels.add(new SvgPlot.Panel(
                    "Throughput over time",
                    "GB/s",
                    "seconds",
                    false,
                    List.of(series("saved GB/s", save), series("loaded GB/s", load))));
        }
        String subtitle = String.format(
                Locale.ROOT,
                "%s:%d, %d workers, %s, %s x %d blocks x %d layers, zipf %.2f/%d prefixes, %s",
                options.host(),
                options.port(),
                options.workers(),
                options.mix(),
                Units.formatBytes(options.blockBytes()),
                options.blocksPerRequest(),
                options.layers(),
                options.zipfExponent(),
                options.prefixes(),
                date);
        return SvgPlot.render("PegaFlow load generator", subtitle, panels);
    }

    private static SvgPlot.Series series(String name, List<double[]> points) {
        double[] x = new double[points.size()];
        double[] y = new double[points.size()];
        for (int i = 0; i < x.length; i++) {
            x[i] = points.get(i)[0];
            y[i] = points.get(i)[1];
        }
        return new SvgPlot.Series(name, x, y);
    }
}
