package io.pegaflow.core.device.cuda;

import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.kernel.plan.RangePlan;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Times copier calls on a save and a load lane thread, as the engine drives them, and appends markdown to the GPU
 * run's report ({@code -Dpega.gpu.report=FILE}). GB/s = 1e9 B/s; wall time from submit to completion.
 */
final class CopyBench implements AutoCloseable {
    final ExecutorService saveLane = Executors.newSingleThreadExecutor(r -> new Thread(r, "gpu0-save"));
    final ExecutorService loadLane = Executors.newSingleThreadExecutor(r -> new Thread(r, "gpu0-load"));

    /** Median GB/s of {@code runs} Saves after one warm-up. */
    double save(DeviceCopier c, RangePlan p, int runs) throws Exception {
        return median(runs, () -> time(saveLane, () -> c.copyToHost(p), p.totalBytes()));
    }

    double load(DeviceCopier c, RangePlan p, int runs) throws Exception {
        return median(runs, () -> time(loadLane, () -> c.copyToDevice(p), p.totalBytes()));
    }

    /** Median aggregate GB/s of a Save and a Load started together. */
    double both(DeviceCopier c, RangePlan up, RangePlan down, int runs) throws Exception {
        return median(runs, () -> {
            CyclicBarrier go = new CyclicBarrier(3);
            Future<?> s = saveLane.submit(() -> {
                go.await(60, TimeUnit.SECONDS);
                c.copyToHost(up);
                return null;
            });
            Future<?> l = loadLane.submit(() -> {
                go.await(60, TimeUnit.SECONDS);
                c.copyToDevice(down);
                return null;
            });
            go.await(60, TimeUnit.SECONDS);
            long t0 = System.nanoTime();
            s.get(120, TimeUnit.SECONDS);
            l.get(120, TimeUnit.SECONDS);
            return (up.totalBytes() + down.totalBytes()) / ((System.nanoTime() - t0) / 1e9) / 1e9;
        });
    }

    interface Run {
        double gbps() throws Exception;
    }

    static double median(int runs, Run run) throws Exception {
        run.gbps(); // warm-up: streams, descriptor buffers, first touches
        double[] v = new double[runs];
        for (int i = 0; i < runs; i++) {
            v[i] = run.gbps();
        }
        Arrays.sort(v);
        return v[runs / 2];
    }

    private static double time(ExecutorService lane, Runnable copy, long bytes) throws Exception {
        long t0 = System.nanoTime();
        lane.submit(copy).get(120, TimeUnit.SECONDS);
        return bytes / ((System.nanoTime() - t0) / 1e9) / 1e9;
    }

    static RangePlan oneRange(long device, long host, long bytes) {
        RangePlan p = new RangePlan(1);
        p.add(device, host, bytes);
        return p;
    }

    static void report(List<String> lines) throws IOException {
        lines.add("");
        lines.forEach(System.out::println);
        String file = System.getProperty("pega.gpu.report");
        if (file != null) {
            Files.write(Path.of(file), lines, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
    }

    @Override
    public void close() {
        saveLane.shutdownNow();
        loadLane.shutdownNow();
    }
}
