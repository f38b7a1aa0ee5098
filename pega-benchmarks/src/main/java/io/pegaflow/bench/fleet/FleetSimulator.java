package io.pegaflow.bench.fleet;

import io.pegaflow.bench.cli.CommandLines;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The fleet simulator: {@code --nodes} simulated PegaFlow servers ({@link SimNode}) against one or more metaservers,
 * at the rates of a stated {@link FleetModel}, with fleet-wide bursts and crashes followed by fenced re-joins. It
 * reports sustained rates, per-RPC latency percentiles, drops, and the metaserver's memory per indexed block and CPU,
 * as a Markdown table, JSON and an SVG plot ({@link FleetReport}).
 *
 * <p>Threads: one driver thread runs every timed event (requests, heartbeats, crashes, restarts, timeline samples)
 * from a priority queue; gRPC callbacks run on the channels' event loops. Thousands of nodes cost no thread each.
 *
 * <pre>
 * java -cp pega-benchmarks/target/benchmarks.jar io.pegaflow.bench.fleet.FleetSimulator \
 *     --targets 127.0.0.1:50056 --metrics http://127.0.0.1:9092 --nodes 1000 --duration 60s --report fleet.md
 * </pre>
 *
 * Exit status: 0 when nothing was lost and no fence was broken, 1 otherwise, 2 for bad options.
 */
public final class FleetSimulator {

    private static final long SAMPLE_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long DRAIN_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final FleetOptions options;
    private final PrintStream out;
    private final PrintStream err;
    private final PriorityQueue<Event> events = new PriorityQueue<>();
    private final AtomicLong sequence = new AtomicLong();
    private volatile boolean running = true;
    private volatile boolean churn = true;

    private record Event(long nanos, long seq, Runnable task) implements Comparable<Event> {
        @Override
        public int compareTo(Event o) {
            int c = Long.compare(nanos - o.nanos, 0);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    FleetSimulator(FleetOptions options, PrintStream out, PrintStream err) {
        this.options = options;
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) {
        FleetOptions options = CommandLines.parseOrExit(FleetOptions::parse, args);
        if (options == null) {
            return; // --help
        }
        int rc;
        try {
            rc = new FleetSimulator(options, System.out, System.err).run();
        } catch (RuntimeException e) {
            e.printStackTrace(System.err);
            rc = 1;
        }
        System.exit(rc);
    }

    private void at(long nanos, Runnable task) {
        synchronized (events) {
            events.add(new Event(nanos, sequence.getAndIncrement(), task));
        }
        // the driver parks at most a millisecond, so an earlier event waits no longer than that
    }

    private void drive() {
        while (running) {
            Event next;
            synchronized (events) {
                Event head = events.peek();
                next = head != null && head.nanos() - System.nanoTime() <= 0 ? events.poll() : null;
            }
            if (next == null) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                continue;
            }
            try {
                next.task().run();
            } catch (RuntimeException e) {
                err.println("warning: simulator event failed: " + e);
            }
        }
    }

    int run() {
        FleetStats stats = new FleetStats();
        List<MetaserverProbe> probes = new ArrayList<>();
        for (int t = 0; t < options.targets.size(); t++) {
            String metrics = options.metrics.isEmpty() ? null : options.metrics.get(t);
            long pid = t < options.gcPids.size() ? options.gcPids.get(t) : 0;
            probes.add(new MetaserverProbe(metrics, pid));
        }
        FleetModel model = options.model();
        err.printf(
                Locale.ROOT,
                "%d nodes x %.2f requests/s (%d blocks each, %d shared) against %s%n",
                options.nodes,
                model.requestsPerNodePerSecond(),
                model.blocksPerRequest(),
                model.sharedBlocks(),
                options.targets);
        // before any node joins: the heap the index grows from
        List<MetaserverProbe.Reading> idle = readAll(probes, true);
        Thread driver = new Thread(this::drive, "fleet-driver");
        driver.setDaemon(true);
        try (FleetContext fleet = new FleetContext(options, stats, this::at)) {
            SplittableRandom random = new SplittableRandom(options.seed);
            List<SimNode> nodes = new ArrayList<>();
            for (int i = 0; i < options.nodes; i++) {
                nodes.add(new SimNode(i, fleet, random.nextLong()));
            }
            driver.start();
            long start = System.nanoTime();
            long warmup = options.warmupDuration().toNanos();
            // joins spread over the first half of the warm-up (at once when there is none)
            for (int i = 0; i < nodes.size(); i++) {
                SimNode n = nodes.get(i);
                long when = start + warmup / 2 * i / nodes.size();
                at(when, () -> n.start(System.nanoTime()));
            }
            long crashEvery = options.crashEveryDuration().toNanos();
            if (crashEvery > 0) {
                scheduleCrash(nodes, random, start + warmup / 2 + crashEvery);
            }
            sleepUntil(start + warmup);
            List<MetaserverProbe.Reading> before = readAll(probes, false);
            double simulatorCpuBefore = processCpuSeconds();
            stats.startRecording();
            long measureStart = System.nanoTime();
            List<FleetReport.Step> timeline = new ArrayList<>();
            long end = measureStart + options.duration().toNanos();
            long[] last = {0, 0, 0};
            for (long tick = measureStart + SAMPLE_NANOS; tick - end <= 0; tick += SAMPLE_NANOS) {
                sleepUntil(tick);
                long ins = stats.insertedBlocks.sum();
                long rem = stats.removedBlocks.sum();
                long qs = stats.queries.sum();
                timeline.add(new FleetReport.Step(
                        (tick - measureStart) / 1e9,
                        ins - last[0],
                        rem - last[1],
                        qs - last[2],
                        stats.takeQueryStep().getValueAtPercentile(99) / 1000.0));
                last[0] = ins;
                last[1] = rem;
                last[2] = qs;
                err.printf(
                        Locale.ROOT,
                        "%4.0f s  inserts %d/s  removes %d/s  queries %d/s  query p99 %.2f ms  drops %d%n",
                        timeline.get(timeline.size() - 1).seconds(),
                        timeline.get(timeline.size() - 1).inserts(),
                        timeline.get(timeline.size() - 1).removes(),
                        timeline.get(timeline.size() - 1).queries(),
                        timeline.get(timeline.size() - 1).queryP99Ms(),
                        stats.unexplainedDrops());
            }
            double seconds = (System.nanoTime() - measureStart) / 1e9;
            List<MetaserverProbe.Reading> after = readAll(probes, false);
            double simulatorCores = (processCpuSeconds() - simulatorCpuBefore) / seconds;
            stats.stopRecording();
            FleetReport.Measured measured =
                    new FleetReport.Measured(seconds, simulatorCores, stats.takeLatencies(), stats.outcomes());

            // Quiesce: no new requests, let queued writes finish, then read the full index and unregister a sample.
            churn = false;
            nodes.forEach(SimNode::stop);
            long drainDeadline = System.nanoTime() + DRAIN_TIMEOUT_NANOS;
            while (!nodes.stream().allMatch(SimNode::idle) && System.nanoTime() - drainDeadline < 0) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            }
            long announced = 0;
            int sampleSize = Math.min(options.unregisterSample, nodes.size());
            for (int k = 0; k < sampleSize; k++) {
                announced +=
                        nodes.get((int) ((long) k * nodes.size() / sampleSize)).announcedRecords();
            }
            long liveNodes = nodes.stream().filter(SimNode::live).count();
            List<MetaserverProbe.Reading> full = readAll(probes, true);
            List<CompletableFuture<Void>> unregisters = new ArrayList<>();
            int sample = Math.min(options.unregisterSample, nodes.size());
            for (int k = 0; k < sample; k++) {
                unregisters.add(
                        nodes.get((int) ((long) k * nodes.size() / sample)).unregister());
            }
            try {
                CompletableFuture.allOf(unregisters.toArray(CompletableFuture[]::new))
                        .get(5, TimeUnit.MINUTES);
            } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
                err.println("warning: unregisters did not all answer: " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            List<MetaserverProbe.Reading> emptied = readAll(probes, true);
            FleetReport report = new FleetReport(
                    options, stats, measured, timeline, idle, before, after, full, emptied, announced, liveNodes);
            out.print(report.markdown());
            write(options.reportPath, report.markdown());
            write(options.jsonPath, report.json());
            write(options.plotPath, report.svg());
            return stats.unexplainedDrops() == 0 && stats.fenceViolations.sum() == 0 ? 0 : 1;
        } finally {
            running = false;
            try {
                driver.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Every {@code --crash-every}, one random live node dies and comes back after {@code --crash-downtime}. */
    private void scheduleCrash(List<SimNode> nodes, SplittableRandom random, long when) {
        at(when, () -> {
            if (!churn) {
                return;
            }
            List<SimNode> live = new ArrayList<>();
            for (SimNode n : nodes) {
                if (n.live()) {
                    live.add(n);
                }
            }
            if (!live.isEmpty()) {
                live.get(random.nextInt(live.size()))
                        .crash(options.crashDowntimeDuration().toNanos());
            }
            scheduleCrash(nodes, random, when + options.crashEveryDuration().toNanos());
        });
    }

    private static List<MetaserverProbe.Reading> readAll(List<MetaserverProbe> probes, boolean gc) {
        List<MetaserverProbe.Reading> out = new ArrayList<>();
        for (MetaserverProbe p : probes) {
            out.add(p.read(gc));
        }
        return out;
    }

    /** This JVM's CPU time: the simulator's own share of the machine, reported beside the metaserver's. */
    private static double processCpuSeconds() {
        java.lang.management.OperatingSystemMXBean os =
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() / 1e9 : Double.NaN;
    }

    private static void sleepUntil(long nanos) {
        for (long left; (left = nanos - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(left);
        }
    }

    private void write(String path, String text) {
        if (path.isEmpty()) {
            return;
        }
        try {
            Files.writeString(Path.of(path), text, StandardCharsets.UTF_8);
            err.println("wrote " + path);
        } catch (IOException e) {
            err.println("error: cannot write " + path + ": " + e.getMessage());
        }
    }
}
