package io.pegaflow.bench.fleet;

import io.pegaflow.bench.fleet.FleetStats.Rpc;
import io.pegaflow.bench.loadgen.Json;
import io.pegaflow.bench.loadgen.SvgPlot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * The end-of-run report: Markdown tables (rates, latency per RPC, drops and fencing, the metaserver's CPU and memory
 * per indexed block), the same figures as JSON, and an SVG with the rates and query p99 over time and each RPC's
 * latency distribution.
 *
 * <p>Memory per block is a difference of two live-heap readings taken after a full GC on the same process: with the
 * fleet's index loaded, and after every live node unregistered (which removes exactly its records). Both readings are
 * taken at the same point of the process's life, so class loading and warm-up cancel out.
 */
final class FleetReport {

    /** One second of the timeline. */
    record Step(double seconds, long inserts, long removes, long queries, double queryP99Ms) {}

    /** The measured window's latencies and outcomes. */
    record Measured(double seconds, double simulatorCores, Map<Rpc, Histogram> latencies, Map<String, Long> outcomes) {}

    private final FleetOptions options;
    private final FleetStats stats;
    private final Measured measured;
    private final List<Step> timeline;
    private final List<MetaserverProbe.Reading> idle;
    private final List<MetaserverProbe.Reading> before;
    private final List<MetaserverProbe.Reading> after;
    private final List<MetaserverProbe.Reading> full;
    private final List<MetaserverProbe.Reading> emptied;
    private final long announced;
    private final long liveNodes;
    private final Histogram unregisterLatency;
    private final String date = ZonedDateTime.now(ZoneOffset.UTC).withNano(0).format(DateTimeFormatter.ISO_INSTANT);
    private final String load = loadAverage();

    FleetReport(
            FleetOptions options,
            FleetStats stats,
            Measured measured,
            List<Step> timeline,
            List<MetaserverProbe.Reading> idle,
            List<MetaserverProbe.Reading> before,
            List<MetaserverProbe.Reading> after,
            List<MetaserverProbe.Reading> full,
            List<MetaserverProbe.Reading> emptied,
            long announced,
            long liveNodes) {
        this.options = options;
        this.stats = stats;
        this.measured = measured;
        this.timeline = timeline;
        this.idle = idle;
        this.before = before;
        this.after = after;
        this.full = full;
        this.emptied = emptied;
        this.announced = announced;
        this.liveNodes = liveNodes;
        this.unregisterLatency = stats.takeUnregisterLatency();
    }

    private static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ", -1);
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "n/a";
        }
    }

    private double rate(long count) {
        return count / measured.seconds();
    }

    /** Metaserver CPU cores used in the measured window, summed over targets (NaN without readings). */
    double metaserverCores() {
        double cpu = 0;
        for (int t = 0; t < before.size(); t++) {
            cpu += after.get(t).cpuSeconds() - before.get(t).cpuSeconds();
        }
        return cpu / measured.seconds();
    }

    double bytesPerRecord() {
        double heap = 0;
        double records = 0;
        for (int t = 0; t < full.size(); t++) {
            heap += full.get(t).heapBytes() - emptied.get(t).heapBytes();
            records += full.get(t).blockOwners() - emptied.get(t).blockOwners();
        }
        return records > 0 ? heap / records : Double.NaN;
    }

    /**
     * Heap growth from before the first join to the loaded index, per owner record: everything the index keeps for
     * a fleet, including what the differential figure cancels (per-session bookkeeping of departed sessions).
     */
    double grossBytesPerRecord() {
        double heap = 0;
        double records = 0;
        for (int t = 0; t < full.size(); t++) {
            heap += full.get(t).heapBytes() - idle.get(t).heapBytes();
            records += full.get(t).blockOwners() - idle.get(t).blockOwners();
        }
        return records > 0 ? heap / records : Double.NaN;
    }

    double bytesPerKey() {
        double heap = 0;
        double keys = 0;
        for (int t = 0; t < full.size(); t++) {
            heap += full.get(t).heapBytes() - emptied.get(t).heapBytes();
            keys += full.get(t).blockKeys() - emptied.get(t).blockKeys();
        }
        return keys > 0 ? heap / keys : Double.NaN;
    }

    /** Records the sampled live sessions' unregisters removed, as the metaserver counted them. */
    double indexedRecordsOfLiveSessions() {
        double records = 0;
        for (int t = 0; t < full.size(); t++) {
            records += full.get(t).blockOwners() - emptied.get(t).blockOwners();
        }
        return records;
    }

    private long totalRpcs() {
        long n = 0;
        for (Histogram h : measured.latencies().values()) {
            n += h.getTotalCount();
        }
        return n;
    }

    String markdown() {
        FleetModel m = options.model();
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "## Fleet simulation: %d nodes against %s%n%n",
                options.nodes,
                String.join(", ", options.targets)));
        sb.append(String.format(
                Locale.ROOT,
                "%s, measured %.1f s after %s warm-up; load average at the end %s; %d cores here.%n%n",
                date,
                measured.seconds(),
                options.warmup,
                load,
                Runtime.getRuntime().availableProcessors()));
        sb.append(String.format(
                Locale.ROOT,
                "Model: %d GPUs/node x %.0f prefill tokens/s/GPU, %d-token blocks, %d-token prompts (%d blocks, %d of"
                        + " them from %d shared prefixes, Zipf %.2f) = %.3f requests/s/node, %d query/request,"
                        + " %d resident blocks/node, bursts x%.1f for %s every %s, a crash every %s (restart after"
                        + " %s), queue %d batches, batch %d hashes.%n%n",
                m.gpusPerNode(),
                m.prefillTokensPerGpu(),
                m.blockTokens(),
                m.promptTokens(),
                m.blocksPerRequest(),
                m.sharedBlocks(),
                options.prefixes,
                options.zipf,
                m.requestsPerNodePerSecond(),
                options.queriesPerRequest,
                options.residentBlocks,
                options.burstFactor,
                options.burstLength,
                options.burstEvery,
                options.crashEvery,
                options.crashDowntime,
                options.queueDepth,
                options.batchSize));
        sb.append("| sustained rate | per second |\n|---|---:|\n");
        row(sb, "requests", rate(stats.requests.sum()));
        row(sb, "inserted blocks (acknowledged)", rate(stats.insertedBlocks.sum()));
        row(sb, "removed blocks (acknowledged)", rate(stats.removedBlocks.sum()));
        row(sb, "prefix queries", rate(stats.queries.sum()));
        row(sb, "queried blocks", rate(stats.queriedBlocks.sum()));
        row(sb, "metaserver RPCs (all kinds)", rate(totalRpcs()));
        long q = stats.queriedBlocks.sum();
        sb.append(String.format(
                Locale.ROOT,
                "%nRemote prefix found for %.1f%% of queried blocks.%n%n",
                q == 0 ? 0 : 100.0 * stats.remoteHitBlocks.sum() / q));
        sb.append("| RPC | count | p50 ms | p99 ms | p99.9 ms | max ms |\n|---|---:|---:|---:|---:|---:|\n");
        measured.latencies().forEach((rpc, h) -> {
            if (h.getTotalCount() > 0) {
                sb.append(String.format(
                        Locale.ROOT,
                        "| %s | %d | %.3f | %.3f | %.3f | %.3f |%n",
                        rpc.label,
                        h.getTotalCount(),
                        h.getValueAtPercentile(50) / 1000.0,
                        h.getValueAtPercentile(99) / 1000.0,
                        h.getValueAtPercentile(99.9) / 1000.0,
                        h.getMaxValue() / 1000.0));
            }
        });
        sb.append("\n| drops and fencing (whole run) | count |\n|---|---:|\n");
        correctness()
                .forEach((k, v) ->
                        sb.append("| ").append(k).append(" | ").append(v).append(" |\n"));
        sb.append("\n| metaserver | value |\n|---|---:|\n");
        row(sb, "CPU cores used (measured window, all targets)", metaserverCores());
        row(sb, "simulator CPU cores used (for comparison)", measured.simulatorCores());
        row(sb, "CPU µs per RPC", metaserverCores() * 1e6 / rate(totalRpcs()));
        row(
                sb,
                "CPU µs per written block (insert + remove)",
                metaserverCores() * 1e6 / rate(stats.insertedBlocks.sum() + stats.removedBlocks.sum()));
        row(sb, "owner records at the end (all targets)", sum(full, MetaserverProbe.Reading::blockOwners));
        row(sb, "keys at the end", sum(full, MetaserverProbe.Reading::blockKeys));
        row(sb, "records the unregistered sample held: metaserver's count", indexedRecordsOfLiveSessions());
        row(sb, "records the unregistered sample held: simulator's count", (double) announced);
        row(sb, "live nodes at the end", (double) liveNodes);
        row(
                sb,
                "heap before the first join (MiB, after full GC)",
                sum(idle, MetaserverProbe.Reading::heapBytes) / (1 << 20));
        row(sb, "heap, index loaded (MiB, after full GC)", sum(full, MetaserverProbe.Reading::heapBytes) / (1 << 20));
        row(sb, "heap, sample unregistered (MiB)", sum(emptied, MetaserverProbe.Reading::heapBytes) / (1 << 20));
        row(sb, "heap growth since the first join per owner record", grossBytesPerRecord());
        row(sb, "heap freed per owner record the sample's unregisters removed", bytesPerRecord());
        row(sb, "heap freed per key the sample's unregisters removed", bytesPerKey());
        Histogram u = unregisterLatency;
        if (u.getTotalCount() > 0) {
            row(sb, "UnregisterNode p50 ms (whole-index scan, after the window)", u.getValueAtPercentile(50) / 1000.0);
            row(sb, "UnregisterNode max ms", u.getMaxValue() / 1000.0);
        }
        sb.append("\nOutcomes: ").append(measured.outcomes()).append("\n");
        return sb.toString();
    }

    Map<String, Long> correctness() {
        Map<String, Long> c = new LinkedHashMap<>();
        c.put("insert hashes lost to failed calls", stats.insertsFailed.sum());
        c.put("remove hashes lost to failed calls", stats.removesFailed.sum());
        c.put("insert hashes refused by a full queue", stats.insertsQueueFull.sum());
        c.put("remove hashes refused by a full queue", stats.removesQueueFull.sum());
        c.put("acknowledged removes that removed less", stats.removeMismatches.sum());
        c.put("unregister count mismatches", stats.unregisterMismatches.sum());
        c.put("unregisters failed", stats.unregistersFailed.sum());
        c.put("dropped removals (total)", stats.droppedRemovals());
        c.put("unexplained drops (total)", stats.unexplainedDrops());
        c.put("writes with a superseded node_id accepted", stats.fenceViolations.sum());
        c.put("writes with a superseded node_id refused", stats.fencedWritesRefused.sum());
        c.put("crashes", stats.crashes.sum());
        c.put("fenced re-joins (takeovers)", stats.rejoins.sum());
        c.put("re-join heartbeats refused while the old session was fresh", stats.rejoinRefusals.sum());
        c.put("re-announcements", stats.reannouncements.sum());
        c.put("requests while holding no session (not sent)", stats.requestsWithoutSession.sum());
        return c;
    }

    private static double sum(
            List<MetaserverProbe.Reading> readings, java.util.function.ToDoubleFunction<MetaserverProbe.Reading> f) {
        double s = 0;
        for (MetaserverProbe.Reading r : readings) {
            s += f.applyAsDouble(r);
        }
        return s;
    }

    private static void row(StringBuilder sb, String name, double value) {
        String v = Double.isNaN(value)
                ? "n/a"
                : value == Math.rint(value) && Math.abs(value) < 1e12
                        ? String.format(Locale.ROOT, "%,d", (long) value)
                        : String.format(Locale.ROOT, Math.abs(value) >= 100 ? "%,.0f" : "%.3f", value);
        sb.append("| ").append(name).append(" | ").append(v).append(" |\n");
    }

    String json() {
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("date", date);
        j.put("loadAverage", load);
        j.put("targets", options.targets);
        j.put("nodes", options.nodes);
        j.put("seconds", measured.seconds());
        j.put("requestsPerSecond", rate(stats.requests.sum()));
        j.put("insertedBlocksPerSecond", rate(stats.insertedBlocks.sum()));
        j.put("removedBlocksPerSecond", rate(stats.removedBlocks.sum()));
        j.put("queriesPerSecond", rate(stats.queries.sum()));
        j.put("requests", stats.requests.sum());
        j.put("insertedBlocks", stats.insertedBlocks.sum());
        j.put("removedBlocks", stats.removedBlocks.sum());
        j.put("queries", stats.queries.sum());
        Map<String, Object> lat = new LinkedHashMap<>();
        measured.latencies().forEach((rpc, h) -> {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("count", h.getTotalCount());
            e.put("p50Ms", h.getValueAtPercentile(50) / 1000.0);
            e.put("p99Ms", h.getValueAtPercentile(99) / 1000.0);
            e.put("p999Ms", h.getValueAtPercentile(99.9) / 1000.0);
            e.put("maxMs", h.getMaxValue() / 1000.0);
            lat.put(rpc.label, e);
        });
        j.put("latency", lat);
        j.put("outcomes", measured.outcomes());
        Map<String, Object> corr = new LinkedHashMap<>();
        corr.put("insertsFailed", stats.insertsFailed.sum());
        corr.put("removesFailed", stats.removesFailed.sum());
        corr.put("insertsQueueFull", stats.insertsQueueFull.sum());
        corr.put("removesQueueFull", stats.removesQueueFull.sum());
        corr.put("removeMismatches", stats.removeMismatches.sum());
        corr.put("unregisterMismatches", stats.unregisterMismatches.sum());
        corr.put("unregistersFailed", stats.unregistersFailed.sum());
        corr.put("droppedRemovals", stats.droppedRemovals());
        corr.put("unexplainedDrops", stats.unexplainedDrops());
        corr.put("fenceViolations", stats.fenceViolations.sum());
        corr.put("fencedWritesRefused", stats.fencedWritesRefused.sum());
        corr.put("crashes", stats.crashes.sum());
        corr.put("rejoins", stats.rejoins.sum());
        corr.put("rejoinRefusals", stats.rejoinRefusals.sum());
        corr.put("reannouncements", stats.reannouncements.sum());
        j.put("correctness", corr);
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("cpuCores", metaserverCores());
        meta.put("simulatorCpuCores", measured.simulatorCores());
        meta.put("ownerRecordsAtEnd", sum(full, MetaserverProbe.Reading::blockOwners));
        meta.put("keysAtEnd", sum(full, MetaserverProbe.Reading::blockKeys));
        meta.put("unregisterP50Ms", unregisterLatency.getValueAtPercentile(50) / 1000.0);
        meta.put("unregisterMaxMs", unregisterLatency.getMaxValue() / 1000.0);
        meta.put("liveSessionRecordsMetaserver", indexedRecordsOfLiveSessions());
        meta.put("liveSessionRecordsSimulator", announced);
        meta.put("liveNodes", liveNodes);
        meta.put("heapBytesPerRecord", bytesPerRecord());
        meta.put("heapBytesPerKey", bytesPerKey());
        meta.put("grossHeapBytesPerRecord", grossBytesPerRecord());
        meta.put("heapIdleBytes", sum(idle, MetaserverProbe.Reading::heapBytes));
        meta.put("heapLoadedBytes", sum(full, MetaserverProbe.Reading::heapBytes));
        meta.put("heapEmptiedBytes", sum(emptied, MetaserverProbe.Reading::heapBytes));
        j.put("metaserver", meta);
        return Json.write(j);
    }

    String svg() {
        double[] xs = new double[timeline.size()];
        double[] ins = new double[xs.length];
        double[] rem = new double[xs.length];
        double[] qs = new double[xs.length];
        double[] p99 = new double[xs.length];
        for (int i = 0; i < xs.length; i++) {
            Step s = timeline.get(i);
            xs[i] = s.seconds();
            ins[i] = s.inserts();
            rem[i] = s.removes();
            qs[i] = s.queries();
            p99[i] = s.queryP99Ms();
        }
        Map<String, Histogram> byName = new LinkedHashMap<>();
        measured.latencies().forEach((rpc, h) -> byName.put(rpc.label, h));
        List<SvgPlot.Panel> panels = new ArrayList<>();
        panels.add(new SvgPlot.Panel(
                "Acknowledged blocks per second",
                "blocks/s",
                "seconds",
                false,
                List.of(new SvgPlot.Series("inserted", xs, ins), new SvgPlot.Series("removed", xs, rem))));
        panels.add(new SvgPlot.Panel(
                "Prefix queries: rate and p99 per second",
                "queries/s | ms",
                "seconds",
                false,
                List.of(new SvgPlot.Series("queries/s", xs, qs), new SvgPlot.Series("query p99 (ms)", xs, p99))));
        panels.add(
                new SvgPlot.Panel("Latency by percentile", "ms", "percentile", true, SvgPlot.percentileSeries(byName)));
        return SvgPlot.render(
                "Fleet simulation: " + options.nodes + " nodes",
                date + ", " + String.join(", ", options.targets) + ", load " + load,
                panels);
    }
}
