package io.pegaflow.bench.loadgen;

import io.grpc.ManagedChannel;
import io.pegaflow.bench.cli.CommandLines;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * End-to-end load generator for a PegaFlow server: N simulated vLLM workers on the host backend issue a weighted mix
 * of Save, QueryPrefetch and Load over gRPC on prefixes drawn from a Zipf law, verify every loaded byte, and report
 * throughput, HdrHistogram latency percentiles, hit rate and errors as a table, JSON and an SVG plot. The
 * {@code e2e} scenario measures fixed single-client figures instead (see {@link E2eScenario}).
 *
 * <p>Device memory lives in {@code /dev/shm}, so the generator must run on the server's machine (the host backend
 * maps it by name). Run {@code --help} for the options; docs/benchmarks.md has worked examples.
 *
 * <pre>
 * java -cp pega-benchmarks/target/benchmarks.jar io.pegaflow.bench.loadgen.LoadGenerator \
 *     --target 127.0.0.1:50055 --workers 4 --duration 30s --mix request=1 --json out.json --plot out.svg
 * </pre>
 *
 * Exit status: 0 when every operation succeeded and every loaded byte matched, 1 otherwise, 2 for bad options.
 */
public final class LoadGenerator {
    private static final long TICK_NANOS = 500_000_000L;

    private final LoadGenOptions options;
    private final PrintStream out;
    private final PrintStream err;

    LoadGenerator(LoadGenOptions options, PrintStream out, PrintStream err) {
        this.options = options;
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) {
        LoadGenOptions options = CommandLines.parseOrExit(a -> LoadGenOptions.parse(System.getenv(), a), args);
        if (options == null) {
            return; // --help
        }
        int rc;
        try {
            rc = options.scenario().equals("e2e")
                    ? new E2eScenario(options, System.out, System.err).run()
                    : new LoadGenerator(options, System.out, System.err).run();
        } catch (RuntimeException e) {
            System.err.println("error: " + e);
            rc = 1;
        }
        System.exit(rc);
    }

    int run() {
        Stats stats = new Stats();
        BlockContent content =
                new BlockContent(options.seed(), options.blockBytes(), options.layers(), options.hashBytes());
        Prefixes prefixes = new Prefixes(content, options.prefixes(), options.blocksPerRequest());
        Zipf zipf = new Zipf(options.prefixes(), options.zipfExponent());
        List<SimWorker> workers = new ArrayList<>();
        List<ManagedChannel> channels = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        Thread hook = new Thread(() -> {
            stop.set(true);
            threads.forEach(LoadGenerator::joinQuietly);
            cleanup(workers, channels);
        });
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            err.printf(
                    Locale.ROOT,
                    "registering %d workers (%s of /dev/shm each) at %s:%d%n",
                    options.workers(),
                    Units.formatBytes(options.deviceBytesPerWorker()),
                    options.host(),
                    options.port());
            for (int i = 0; i < options.workers(); i++) {
                ManagedChannel channel = Channels.open(options.host(), options.port());
                channels.add(channel);
                SimWorker w = new SimWorker(
                        options.instancePrefix() + "-w" + i,
                        options,
                        channel,
                        prefixes,
                        stats,
                        options.layers(),
                        options.blocksPerRequest(),
                        options.blockBytes());
                workers.add(w);
                w.register();
            }
            AtomicLong remaining = new AtomicLong(options.ops() > 0 ? options.ops() : Long.MAX_VALUE);
            for (int i = 0; i < workers.size(); i++) {
                SimWorker w = workers.get(i);
                long seed = BlockContent.mix64(options.seed() + i * 0x632BE59BD9B4E019L);
                Thread t = new Thread(() -> drive(w, zipf, seed, stats, stop, remaining), "loadgen-" + i);
                t.setDaemon(true);
                threads.add(t);
            }
            threads.forEach(Thread::start);
            List<Stats.Sample> timeline = measure(stats, stop, remaining);
            threads.forEach(LoadGenerator::joinQuietly);
            Stats.Sample last = timeline.get(timeline.size() - 1);
            Report report = new Report(options, last.seconds(), stats, timeline);
            out.print(report.table());
            write(options.jsonPath(), report.json());
            write(options.plotPath(), report.svg());
            return report.errors() == 0 && report.verifyFailures() == 0 ? 0 : 1;
        } finally {
            stop.set(true);
            threads.forEach(LoadGenerator::joinQuietly);
            cleanup(workers, channels);
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // already shutting down
            }
        }
    }

    /** Warm-up, then the measured phase; returns the counter samples taken every tick. */
    private List<Stats.Sample> measure(Stats stats, AtomicBoolean stop, AtomicLong remaining) {
        ProgressBar bar = new ProgressBar(err, options.progress());
        long warmupEnd = System.nanoTime() + options.warmup().toNanos();
        while (System.nanoTime() < warmupEnd) {
            long left = warmupEnd - System.nanoTime();
            bar.update(0, String.format(Locale.ROOT, "warm-up, %.1f s left", left / 1e9));
            LockSupport.parkNanos(Math.min(TICK_NANOS, Math.max(1, left)));
        }
        stats.startRecording();
        long start = System.nanoTime();
        long end = start + options.duration().toNanos();
        List<Stats.Sample> timeline = new ArrayList<>();
        timeline.add(stats.sample(0));
        Stats.Sample prev = timeline.get(0);
        for (; ; ) {
            LockSupport.parkNanos(TICK_NANOS);
            long now = System.nanoTime();
            Stats.Sample s = stats.sample((now - start) / 1e9);
            timeline.add(s);
            boolean byOps = options.ops() > 0;
            double fraction = byOps ? (double) s.ops() / options.ops() : (double) (now - start) / (end - start);
            double dt = s.seconds() - prev.seconds();
            bar.update(fraction, status(s, prev, dt, byOps));
            prev = s;
            if ((byOps && (remaining.get() <= 0 || stop.get())) || (!byOps && now >= end)) {
                break;
            }
        }
        stop.set(true);
        bar.finish();
        return timeline;
    }

    private String status(Stats.Sample s, Stats.Sample prev, double dt, boolean byOps) {
        double hit = s.queriedBlocks() == 0 ? Double.NaN : 100.0 * s.hitBlocks() / s.queriedBlocks();
        return String.format(
                Locale.ROOT,
                "%s  ops %d (%s/s)  save %.2f GB/s  load %.2f GB/s  hit %s  err %d",
                byOps
                        ? String.format(Locale.ROOT, "%d/%d ops", s.ops(), options.ops())
                        : String.format(
                                Locale.ROOT,
                                "%.0f/%.0f s",
                                s.seconds(),
                                options.duration().toMillis() / 1000.0),
                s.ops(),
                Units.formatRate(dt > 0 ? (s.ops() - prev.ops()) / dt : 0),
                dt > 0 ? (s.savedBytes() - prev.savedBytes()) / dt / 1e9 : 0,
                dt > 0 ? (s.loadedBytes() - prev.loadedBytes()) / dt / 1e9 : 0,
                Double.isNaN(hit) ? "-" : String.format(Locale.ROOT, "%.1f%%", hit),
                s.errors());
    }

    /** One worker's loop: paced (intended start times, so queueing counts) or closed-loop. */
    private void drive(SimWorker worker, Zipf zipf, long seed, Stats stats, AtomicBoolean stop, AtomicLong remaining) {
        SplittableRandom random = new SplittableRandom(seed);
        long interval = options.rate() > 0 ? (long) (1e9 * options.workers() / options.rate()) : 0;
        long next = System.nanoTime() + (interval > 0 ? random.nextLong(interval) : 0);
        while (!stop.get()) {
            long intended;
            if (interval > 0) {
                long now;
                while ((now = System.nanoTime()) < next && !stop.get()) {
                    LockSupport.parkNanos(next - now);
                }
                intended = next;
                next += interval;
            } else {
                intended = System.nanoTime();
            }
            if (stop.get()) {
                return;
            }
            if (stats.recording() && remaining.getAndDecrement() <= 0) {
                stop.set(true);
                return;
            }
            OpMix.Op op = options.mix().next(random);
            int k = zipf.sample(random);
            worker.run(op, k, intended);
        }
    }

    private void cleanup(List<SimWorker> workers, List<ManagedChannel> channels) {
        synchronized (workers) {
            for (SimWorker w : workers) {
                try {
                    w.unregister();
                } catch (RuntimeException e) {
                    err.println("warning: unregister of " + w.instanceId() + " failed: " + e.getMessage());
                }
                w.close();
            }
            workers.clear();
            channels.forEach(Channels::close);
            channels.clear();
        }
    }

    private void write(String path, String text) {
        writeFile(err, path, text);
    }

    static void writeFile(PrintStream err, String path, String text) {
        if (path == null || path.isEmpty()) {
            return;
        }
        try {
            Files.writeString(Path.of(path), text, StandardCharsets.UTF_8);
            err.println("wrote " + path);
        } catch (IOException e) {
            err.println("error: cannot write " + path + ": " + e.getMessage());
        }
    }

    private static void joinQuietly(Thread t) {
        try {
            t.join(60_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
