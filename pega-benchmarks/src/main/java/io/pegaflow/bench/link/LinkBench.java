package io.pegaflow.bench.link;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.proto.LeaseLoad;
import io.pegaflow.proto.LoadRequest;
import io.pegaflow.proto.LoadResponse;
import io.pegaflow.proto.QueryRequest;
import io.pegaflow.proto.QueryResponse;
import io.pegaflow.proto.ReleaseRequest;
import io.pegaflow.proto.SaveLayer;
import io.pegaflow.proto.SaveRequest;
import io.pegaflow.proto.SaveResponse;
import io.pegaflow.testkit.LoadStateShm;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Save, QueryPrefetch and Load of scattered blocks against an instance another process registered, timed as a
 * compiled client sees them (no Python on the hot path): per run, a Save of {@code count} blocks of every layer with
 * fresh hashes, QueryPrefetch polled until all of them hit, and a Load of them into other scattered blocks, waited for
 * on the load-state object. Block ids follow {@code gpu-tests/bandwidth.py}: {@code count} distinct ids drawn from
 * {@code [0, blocks)}, neighbours in request order never adjacent.
 *
 * <pre>
 * java -cp pega-benchmarks/target/benchmarks.jar io.pegaflow.bench.link.LinkBench --addr 127.0.0.1:50055 \
 *     --instance bw-kv16 --layers model.layers.0.self_attn.attn,... --blocks 2048 --count 1024 --runs 3 --out java.json
 * </pre>
 *
 * The JSON report has each run's times and block ids, so the process that owns the memory can check every loaded byte.
 */
public final class LinkBench {
    private static final int MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
    private static final long QUERY_POLL_NANOS = 200_000L;
    private static final long STATE_POLL_NANOS = 20_000L;
    private static final int SPINS_BEFORE_PARKING = 2_000;

    /**
     * One run's times (ms) and ids.
     *
     * @param buildMs building the Save request (outside the Save time)
     * @param saveMs the Save RPC, which returns once the copy landed in the pool
     * @param sendMs the part of {@code saveMs} until the client had serialised and handed over the request
     * @param queryMs QueryPrefetch polled until every block hit
     * @param loadMs from sending Load until the load-state object turned 1
     * @param saveIds the saved block ids, in request order
     * @param loadIds where the saved blocks were loaded, in the same order
     */
    public record Run(
            double buildMs,
            double saveMs,
            double sendMs,
            double queryMs,
            double loadMs,
            int[] saveIds,
            int[] loadIds) {}

    private final LinkOptions options;
    private final EngineGrpc.EngineBlockingStub stub;
    private final SendClock sendClock = new SendClock();
    private final SplittableRandom random;

    /** Full-size requests built and serialised before the first timed Save (see {@link #warmRequestPath}). */
    static final int WARM_REQUESTS = 30;

    private LinkBench(LinkOptions options, ManagedChannel channel) {
        this.options = options;
        this.stub = EngineGrpc.newBlockingStub(channel).withInterceptors(sendClock);
        this.random = new SplittableRandom(options.seed());
    }

    /**
     * The runs, and the server's Prometheus text before and after the cold first run, before the first measured run
     * (after the warm-up) and after the last (all empty when {@link LinkOptions#metricsUrl()} is).
     */
    public record Report(
            List<Run> runs, String metricsCold, String metricsColdAfter, String metricsBefore, String metricsAfter) {}

    /** Runs {@code 1 + options.runs()} runs in order on one channel; the first is the cold or warm-up run. */
    public static List<Run> run(LinkOptions options) {
        return report(options).runs();
    }

    /** As {@link #run}, with the server's metrics around the cold run and the measured runs. */
    public static Report report(LinkOptions options) {
        NettyChannelBuilder builder = NettyChannelBuilder.forAddress(options.host(), options.port())
                .usePlaintext()
                .maxInboundMessageSize(MAX_MESSAGE_BYTES);
        int buffer = options.writeBufferBytes();
        if (buffer > 0) {
            builder.withOption(ChannelOption.SO_SNDBUF, buffer)
                    .withOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(buffer / 2, buffer));
        }
        ManagedChannel channel = builder.build();
        try {
            LinkBench bench = new LinkBench(options, channel);
            // Connects and loads the client's classes, so the first run's Save times the server, not the channel.
            bench.deadline().health(HealthRequest.getDefaultInstance());
            bench.warmRequestPath();
            bench.warmCallPath();
            List<Run> runs = new ArrayList<>(options.runs() + 1);
            String cold = scrape(options.metricsUrl());
            runs.add(bench.one(0));
            String coldAfter = scrape(options.metricsUrl());
            for (int w = 0; w < options.warmup(); w++) {
                bench.warmCycle(w);
            }
            String before = options.warmup() == 0 ? coldAfter : scrape(options.metricsUrl());
            for (int r = 1; r <= options.runs(); r++) {
                runs.add(bench.one(r));
            }
            return new Report(runs, cold, coldAfter, before, scrape(options.metricsUrl()));
        } finally {
            channel.shutdownNow();
            try {
                channel.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * QueryPrefetch calls of hashes nobody saved ({@code warmup × warmQueries}), before the cold first run: they have
     * the JIT compile this client's call path (the channel, HTTP/2 framing, protobuf's writer of repeated bytes, which
     * a Save's hashes go through too), so the cold run times the server's first Save of the instance, not this JVM's
     * interpreter. Measured on a 2-core machine, a 625-hash QueryPrefetch took 3–9 ms in a fresh client and server and
     * 0.4–0.6 ms after about 2,000 of them.
     */
    private void warmCallPath() {
        QueryRequest miss = QueryRequest.newBuilder()
                .setInstanceId(options.instanceId())
                .addAllBlockHashes(hashes(options.salt() + "-never-saved", options.count()))
                .setReqId("link-warm-miss")
                .build();
        for (int i = 0; i < options.warmup() * options.warmQueries(); i++) {
            QueryResponse r = deadline().queryPrefetch(miss);
            if (r.hasReady() && !r.getReady().getLease().isEmpty()) {
                release(r.getReady().getLease());
            }
        }
    }

    /**
     * One unmeasured cycle between the cold run and the measured ones: a Save of fresh hashes, QueryPrefetch until
     * every block hit, a Load of them back into the blocks they were saved from (the memory keeps its bytes, so the
     * owner's replay of the measured runs needs no record of it, and a wrong byte would still show there), then
     * {@code warmQueries - 1} more QueryPrefetch calls, each lease released. The measured runs then time the compiled
     * paths of both ends, as a server in service (vLLM's scheduler queries every step) and a compiled client run them.
     */
    private void warmCycle(int cycle) {
        int[] ids = scattered(options.blocks(), options.count(), random);
        List<ByteString> hashes = hashes(options.salt() + "-warmup-" + cycle, options.count());
        SaveResponse saved = deadline().save(saveRequest(ids, hashes));
        require(saved.getStatus().getOk(), "warm-up save", saved.getStatus().getMessage());
        load(queryUntilHit(hashes, "link-warmup-" + cycle), ids);
        for (int q = 1; q < options.warmQueries(); q++) {
            release(queryUntilHit(hashes, "link-warmup-" + cycle + "-" + q));
        }
    }

    /**
     * Builds and serialises full-size Save requests without sending them, so the JIT has compiled the client's own
     * request path before the first Save is timed: a compiled client in production has long been warm, and a cold one
     * would charge its interpreter to the server's first Save.
     */
    private void warmRequestPath() {
        for (int i = 0; i < WARM_REQUESTS; i++) {
            int[] ids = scattered(options.blocks(), options.count(), random);
            try {
                saveRequest(ids, hashes(options.salt() + "-warm-" + i, options.count()))
                        .writeTo(OutputStream.nullOutputStream());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private EngineGrpc.EngineBlockingStub deadline() {
        return stub.withDeadlineAfter(options.timeoutSeconds(), TimeUnit.SECONDS);
    }

    private Run one(int run) {
        int[] ids = scattered(options.blocks(), options.count(), random);
        long t0 = System.nanoTime();
        List<ByteString> hashes = hashes(options.salt() + "-" + run, options.count());
        SaveRequest save = saveRequest(ids, hashes);
        long t1 = System.nanoTime();
        SaveResponse saved = deadline().save(save);
        long t2 = System.nanoTime();
        long handedOver = sendClock.sentNanos();
        require(saved.getStatus().getOk(), "save", saved.getStatus().getMessage());
        ByteString lease = queryUntilHit(hashes, "link-" + run);
        long t3 = System.nanoTime();
        int[] dst = scattered(options.blocks(), options.count(), random);
        long loadNanos = load(lease, dst);
        return new Run(ms(t1 - t0), ms(t2 - t1), ms(handedOver - t1), ms(t3 - t2), ms(loadNanos), ids, dst);
    }

    /** Loads the lease's blocks into {@code dst}; the nanoseconds from sending the Load until the state turned 1. */
    private long load(ByteString lease, int[] dst) {
        try (LoadStateShm state = LoadStateShm.create()) {
            LoadRequest load = LoadRequest.newBuilder()
                    .setInstanceId(options.instanceId())
                    .setLoadStateShm(state.name())
                    .addAllLayerNames(options.layerNames())
                    .addLoads(LeaseLoad.newBuilder().setLease(lease).addAllBlockIds(boxed(dst)))
                    .build();
            long sent = System.nanoTime();
            LoadResponse loaded = deadline().load(load);
            require(loaded.getStatus().getOk(), "load", loaded.getStatus().getMessage());
            long s = awaitState(state, sent);
            require(s == LoadStateShm.SUCCESS, "load", "load state " + s);
            return System.nanoTime() - sent;
        }
    }

    private void release(ByteString lease) {
        deadline().release(ReleaseRequest.newBuilder().setLease(lease).build());
    }

    private SaveRequest saveRequest(int[] ids, List<ByteString> hashes) {
        List<Integer> boxedIds = boxed(ids);
        SaveRequest.Builder b = SaveRequest.newBuilder().setInstanceId(options.instanceId());
        for (String layer : options.layerNames()) {
            b.addSaves(SaveLayer.newBuilder()
                    .setLayerName(layer)
                    .addAllBlockIds(boxedIds)
                    .addAllBlockHashes(hashes));
        }
        return b.build();
    }

    /** Polls as vLLM's scheduler does until every block hits (sealing is asynchronous); partial leases go back. */
    private ByteString queryUntilHit(List<ByteString> hashes, String reqId) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(options.timeoutSeconds());
        QueryRequest query = QueryRequest.newBuilder()
                .setInstanceId(options.instanceId())
                .addAllBlockHashes(hashes)
                .setReqId(reqId)
                .build();
        long hits = 0;
        while (System.nanoTime() < deadline) {
            QueryResponse r = deadline().queryPrefetch(query);
            if (r.hasReady()) {
                hits = r.getReady().getNumHitBlocks();
                if (hits >= hashes.size()) {
                    return r.getReady().getLease();
                }
                if (!r.getReady().getLease().isEmpty()) {
                    release(r.getReady().getLease());
                }
            }
            LockSupport.parkNanos(QUERY_POLL_NANOS);
        }
        throw new IllegalStateException("query " + reqId + " reached " + hits + " of " + hashes.size() + " hits in "
                + options.timeoutSeconds() + " s");
    }

    private long awaitState(LoadStateShm state, long sentNanos) {
        long deadline = sentNanos + TimeUnit.SECONDS.toNanos(options.timeoutSeconds());
        long s;
        int spins = 0;
        while ((s = state.state()) == LoadStateShm.PENDING) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "load state " + state.name() + " still pending after " + options.timeoutSeconds() + " s");
            }
            // Spin briefly, then poll every 20 µs: a client spinning for a whole Load would take a core from the
            // server's own threads on a small machine.
            if (++spins < SPINS_BEFORE_PARKING) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(STATE_POLL_NANOS);
            }
        }
        return s;
    }

    /** The {@code pegaflow_} samples of the server's Prometheus page; empty when there is no URL. */
    private static String scrape(String url) {
        if (url.isEmpty()) {
            return "";
        }
        try (InputStream in = URI.create(url).toURL().openStream()) {
            StringBuilder out = new StringBuilder();
            new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .lines()
                    .filter(line -> line.startsWith("pegaflow_"))
                    .forEach(line -> out.append(line).append('\n'));
            return out.toString();
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + url, e);
        }
    }

    private static void require(boolean ok, String what, String message) {
        if (!ok) {
            throw new IllegalStateException(what + " failed: " + message);
        }
    }

    /**
     * {@code count} distinct ids of {@code [0, n)} in random order, with no two neighbours in the request adjacent
     * (bandwidth.py's {@code scattered}).
     */
    static int[] scattered(int n, int count, SplittableRandom random) {
        int[] all = new int[n];
        for (int i = 0; i < n; i++) {
            all[i] = i;
        }
        for (int i = 0; i < count; i++) {
            int j = i + random.nextInt(n - i);
            int t = all[i];
            all[i] = all[j];
            all[j] = t;
        }
        int[] ids = Arrays.copyOf(all, count);
        for (int i = 1; i < count; i++) {
            if (Math.abs(ids[i] - ids[i - 1]) == 1) {
                int j = random.nextInt(count);
                int t = ids[i];
                ids[i] = ids[j];
                ids[j] = t;
            }
        }
        return ids;
    }

    /** 32-byte hashes, SHA-256 of {@code "salt:i"}, as gpu-tests' {@code block_hash}. */
    static List<ByteString> hashes(String salt, int count) {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        List<ByteString> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(ByteString.copyFrom(sha.digest((salt + ":" + i).getBytes(StandardCharsets.UTF_8))));
        }
        return out;
    }

    private static List<Integer> boxed(int[] ids) {
        List<Integer> out = new ArrayList<>(ids.length);
        for (int id : ids) {
            out.add(id);
        }
        return out;
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    /** The report: options, the first run apart, then every run with its ids. */
    static String json(LinkOptions o, Report report) {
        List<Run> runs = report.runs();
        StringBuilder b = new StringBuilder(64 * 1024);
        b.append("{\"instance\":\"")
                .append(o.instanceId())
                .append("\",\"layers\":")
                .append(o.layerNames().size())
                .append(",\"blocks\":")
                .append(o.blocks())
                .append(",\"count\":")
                .append(o.count())
                .append(",\"runs\":[");
        for (int r = 0; r < runs.size(); r++) {
            Run run = runs.get(r);
            b.append(r == 0 ? "" : ",")
                    .append("{\"build_ms\":")
                    .append(run.buildMs())
                    .append(",\"save_ms\":")
                    .append(run.saveMs())
                    .append(",\"send_ms\":")
                    .append(run.sendMs())
                    .append(",\"query_ms\":")
                    .append(run.queryMs())
                    .append(",\"load_ms\":")
                    .append(run.loadMs())
                    .append(",\"save_ids\":")
                    .append(Arrays.toString(run.saveIds()).replace(" ", ""))
                    .append(",\"load_ids\":")
                    .append(Arrays.toString(run.loadIds()).replace(" ", ""))
                    .append('}');
        }
        b.append("],\"warmup\":")
                .append(o.warmup())
                .append(",\"warm_queries\":")
                .append(o.warmQueries())
                .append(",\"metrics_cold\":");
        quote(b, report.metricsCold());
        b.append(",\"metrics_cold_after\":");
        quote(b, report.metricsColdAfter());
        b.append(",\"metrics_before\":");
        quote(b, report.metricsBefore());
        b.append(",\"metrics_after\":");
        quote(b, report.metricsAfter());
        return b.append('}').toString();
    }

    /** A JSON string of Prometheus text: quotes, backslashes and newlines escaped (nothing else occurs in it). */
    private static void quote(StringBuilder b, String text) {
        b.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> b.append(c < 0x20 ? ' ' : c);
            }
        }
        b.append('"');
    }

    public static void main(String[] args) throws IOException {
        List<String> out = new ArrayList<>(1);
        LinkOptions options = LinkOptions.parse(args, out);
        Report report = report(options);
        List<Run> runs = report.runs();
        for (int r = 0; r < runs.size(); r++) {
            Run run = runs.get(r);
            System.out.printf(
                    "run %d: save %.2f ms, query %.2f ms, load %.2f ms (request built in %.2f ms)%n",
                    r, run.saveMs(), run.queryMs(), run.loadMs(), run.buildMs());
        }
        String json = json(options, report);
        if (out.isEmpty()) {
            System.out.println(json);
        } else {
            Files.writeString(Path.of(out.get(0)), json);
        }
    }
}
