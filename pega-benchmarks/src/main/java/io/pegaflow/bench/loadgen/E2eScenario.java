package io.pegaflow.bench.loadgen;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.pegaflow.proto.QueryReady;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * Fixed end-to-end figures over gRPC from one client, each repeated {@code --e2e-reps} times after two unrecorded
 * warm-up repetitions:
 *
 * <ol>
 *   <li>Save of {@code --e2e-save-blocks} blocks of {@code --block-size} (fresh hashes each time). With
 *       {@code --admin-url} the RAM index is drained untimed before each Save, so no Save pays for eviction.
 *   <li>Load of those blocks (the query and lease are untimed): the Load RPC alone, and until the load state reads
 *       SUCCESS. Every loaded byte is verified, untimed.
 *   <li>QueryPrefetch of {@code --e2e-query-blocks} resident hashes of 1 KiB blocks, all hits, as the reference's
 *       {@code query_prefetch_lease} (its lease is released untimed).
 * </ol>
 */
final class E2eScenario {
    private static final long QUERY_BLOCK_BYTES = 1024;
    private static final int WARMUP_REPS = 2;

    private final LoadGenOptions o;
    private final PrintStream out;
    private final PrintStream err;

    E2eScenario(LoadGenOptions options, PrintStream out, PrintStream err) {
        this.o = options;
        this.out = out;
        this.err = err;
    }

    int run() {
        String date =
                ZonedDateTime.now(ZoneId.systemDefault()).withNano(0).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        int reps = o.e2eReps();
        int saveBlocks = o.e2eSaveBlocks();
        int queryBlocks = o.e2eQueryBlocks();
        long bs = o.blockBytes();
        Stats scratch = new Stats();
        Stats save = new Stats();
        Stats load = new Stats();
        Stats query = new Stats();
        ProgressBar bar = new ProgressBar(err, o.progress());
        int totalSteps = 3 * (reps + WARMUP_REPS);
        int step = 0;
        ManagedChannel channel = Channels.open(o.host(), o.port());
        BlockContent saveContent = new BlockContent(o.seed() ^ System.nanoTime(), bs, 1, o.hashBytes());
        Prefixes savePrefixes = new Prefixes(saveContent, reps + WARMUP_REPS, saveBlocks);
        BlockContent queryContent = new BlockContent(o.seed() ^ System.nanoTime(), QUERY_BLOCK_BYTES, 1, o.hashBytes());
        Prefixes queryPrefixes = new Prefixes(queryContent, 1, queryBlocks);
        SimWorker saver = null;
        SimWorker querier = null;
        try {
            saver = new SimWorker(
                    o.instancePrefix() + "-e2e-save", o, channel, savePrefixes, scratch, 1, saveBlocks, bs);
            saver.register();
            querier = new SimWorker(
                    o.instancePrefix() + "-e2e-query",
                    o,
                    channel,
                    queryPrefixes,
                    scratch,
                    1,
                    queryBlocks,
                    QUERY_BLOCK_BYTES);
            querier.register();
            if (o.adminUrl().isEmpty()) {
                err.println("note: no --admin-url, so later Saves may pay for LRU eviction inside the timed RPC");
            }

            // 1. Save: fresh prefix per repetition.
            int last = 0;
            for (int r = 0; r < reps + WARMUP_REPS; r++) {
                if (r == WARMUP_REPS) {
                    save.startRecording();
                }
                cleanup();
                saver.useStats(save);
                saver.save(r, 0, saveBlocks);
                last = r;
                bar.update((double) ++step / totalSteps, "save " + (r + 1) + "/" + (reps + WARMUP_REPS));
            }

            // 2. Load of the last saved prefix.
            saver.useStats(scratch);
            awaitAllHit(saver, last, saveBlocks);
            for (int r = 0; r < reps + WARMUP_REPS; r++) {
                if (r == WARMUP_REPS) {
                    load.startRecording();
                }
                saver.useStats(scratch);
                QueryReady ready = saver.query(last);
                if (ready.getNumHitBlocks() != saveBlocks) {
                    throw new IllegalStateException(
                            "expected " + saveBlocks + " hits before the Load, got " + ready.getNumHitBlocks());
                }
                saver.useStats(load);
                saver.load(last, saveBlocks, ready.getLease());
                bar.update((double) ++step / totalSteps, "load " + (r + 1) + "/" + (reps + WARMUP_REPS));
            }

            // 3. QueryPrefetch, all hits.
            querier.useStats(scratch);
            querier.save(0, 0, queryBlocks);
            awaitAllHit(querier, 0, queryBlocks);
            for (int r = 0; r < reps + WARMUP_REPS; r++) {
                if (r == WARMUP_REPS) {
                    query.startRecording();
                }
                querier.useStats(query);
                QueryReady ready = querier.query(0);
                if (ready.getNumHitBlocks() != queryBlocks) {
                    throw new IllegalStateException(
                            "expected " + queryBlocks + " hits, got " + ready.getNumHitBlocks());
                }
                querier.useStats(scratch);
                querier.release(ready.getLease());
                bar.update((double) ++step / totalSteps, "query " + (r + 1) + "/" + (reps + WARMUP_REPS));
            }
            bar.finish();

            Map<String, Histogram> rows = new LinkedHashMap<>();
            rows.put(
                    "QueryPrefetch " + queryBlocks + " hashes (all hit)",
                    query.takeRpcHistograms().get(Stats.Rpc.QUERY));
            rows.put(
                    "Save " + saveBlocks + " x " + Units.formatBytes(bs),
                    save.takeRpcHistograms().get(Stats.Rpc.SAVE));
            Map<Stats.Rpc, Histogram> loads = load.takeRpcHistograms();
            rows.put("Load " + saveBlocks + " x " + Units.formatBytes(bs) + " (RPC)", loads.get(Stats.Rpc.LOAD));
            rows.put(
                    "Load " + saveBlocks + " x " + Units.formatBytes(bs) + " (until done)",
                    loads.get(Stats.Rpc.LOAD_DONE));
            long[] bytes = {0, (long) saveBlocks * bs, (long) saveBlocks * bs, (long) saveBlocks * bs};
            long[] blocks = {queryBlocks, saveBlocks, saveBlocks, saveBlocks};
            print(rows, bytes, blocks, date, reps);
            LoadGenerator.writeFile(err, o.jsonPath(), json(rows, bytes, blocks, date, reps));
            LoadGenerator.writeFile(
                    err,
                    o.plotPath(),
                    SvgPlot.render(
                            "PegaFlow end-to-end over gRPC",
                            o.host() + ":" + o.port() + "  " + reps + " reps  " + date,
                            List.of(new SvgPlot.Panel(
                                    "Latency by percentile",
                                    "latency (ms)",
                                    "percentile",
                                    true,
                                    SvgPlot.percentileSeries(rows)))));
            return 0;
        } finally {
            for (SimWorker w : new SimWorker[] {saver, querier}) {
                if (w != null) {
                    try {
                        w.unregister();
                    } catch (RuntimeException e) {
                        err.println("warning: unregister of " + w.instanceId() + " failed: " + e.getMessage());
                    }
                    w.close();
                }
            }
            Channels.close(channel);
        }
    }

    /** Sealing is asynchronous: poll until every block of the prefix hits, releasing each lease. */
    private void awaitAllHit(SimWorker w, int k, int expected) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        for (; ; ) {
            QueryReady ready = w.query(k);
            ByteString lease = ready.getLease();
            if (!lease.isEmpty()) {
                w.release(lease);
            }
            if (ready.getNumHitBlocks() == expected) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(
                        "only " + ready.getNumHitBlocks() + " of " + expected + " blocks visible after 60 s");
            }
            LockSupport.parkNanos(1_000_000);
        }
    }

    /** Drains the server's RAM index through its HTTP admin endpoint, when one was given. */
    private void cleanup() {
        if (o.adminUrl().isEmpty()) {
            return;
        }
        String url = o.adminUrl().replaceAll("/+$", "") + "/cache/memory/cleanup";
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url))
                // the server refuses a mutation that a web page could send (docs/security.md)
                .header("X-Pega-Request", "1")
                .POST(HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(30));
        if (!o.adminToken().isEmpty()) {
            request.header("Authorization", "Bearer " + o.adminToken());
        }
        try {
            HttpResponse<String> r =
                    HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 403 && o.adminToken().isEmpty()) {
                throw new IllegalStateException("POST " + url + " answered 403: the server's HTTP port needs its"
                        + " pega.admin.token; pass --admin-token or set " + LoadGenOptions.ADMIN_TOKEN_ENV);
            }
            if (r.statusCode() / 100 != 2) {
                throw new IllegalStateException("POST " + url + " answered " + r.statusCode() + ": " + r.body());
            }
        } catch (java.io.IOException e) {
            throw new IllegalStateException("POST " + url + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private void print(Map<String, Histogram> rows, long[] bytes, long[] blocks, String date, int reps) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "%nPegaFlow end-to-end over gRPC: %s:%d, %d reps after %d warm-up, %s%n%n",
                o.host(),
                o.port(),
                reps,
                WARMUP_REPS,
                date));
        sb.append(String.format(
                Locale.ROOT,
                "%-44s %8s %8s %8s %8s %8s   %s%n",
                "measurement (ms)",
                "min",
                "p50",
                "p90",
                "max",
                "mean",
                "at p50"));
        int i = 0;
        for (Map.Entry<String, Histogram> e : rows.entrySet()) {
            Histogram h = e.getValue();
            double p50 = h.getValueAtPercentile(50) / 1000.0;
            String rate = bytes[i] > 0
                    ? String.format(Locale.ROOT, "%.2f GB/s", bytes[i] / (p50 / 1000) / 1e9)
                    : Units.formatRate(blocks[i] / (p50 / 1000)) + " blocks/s";
            sb.append(String.format(
                    Locale.ROOT,
                    "%-44s %8.3f %8.3f %8.3f %8.3f %8.3f   %s%n",
                    e.getKey(),
                    h.getMinValue() / 1000.0,
                    p50,
                    h.getValueAtPercentile(90) / 1000.0,
                    h.getMaxValue() / 1000.0,
                    h.getMean() / 1000.0,
                    rate));
            i++;
        }
        out.print(sb);
    }

    private String json(Map<String, Histogram> rows, long[] bytes, long[] blocks, String date, int reps) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("tool", "pega-loadgen");
        root.put("scenario", "e2e");
        root.put("date", date);
        root.put("target", o.host() + ":" + o.port());
        root.put("reps", reps);
        root.put("warmup_reps", WARMUP_REPS);
        List<Object> list = new ArrayList<>();
        int i = 0;
        for (Map.Entry<String, Histogram> e : rows.entrySet()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", e.getKey());
            m.put("blocks", blocks[i]);
            m.put("bytes", bytes[i]);
            m.put("latency_us", Report.latencyJson(e.getValue()));
            list.add(m);
            i++;
        }
        root.put("measurements", list);
        return Json.write(root);
    }
}
