package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.plan.RangePlan;
import io.pegaflow.sys.cuda.Cuda;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Measures the cuda copier without gRPC: Save (device to pool) and Load (pool to device) of 1 GiB batches of
 * scattered blocks, both directions at once, and how long the pool takes to become DMA-ready. Numbers go to stdout and,
 * when {@code -Dpega.gpu.report=FILE} is set, are appended to FILE as markdown. Asserts only sanity, never a speed.
 */
@Tag("gpu")
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class CudaCopyBenchGpuTest {
    private static final long GIB = 1L << 30;
    private static final long BATCH = GIB;
    private static final int RUNS = 5;

    @Test
    void saveLoadAndBidirectionalThroughput() throws Exception {
        assumeTrue(CudaDeviceBackend.isAvailable(), "no CUDA driver or GPU");
        List<String> out = new ArrayList<>();
        out.add("### Copier throughput, Java (JNA) direct, no gRPC: 1 GiB per batch, device blocks scattered");
        out.add("");
        out.add("| block | ranges | Save D2H GB/s (median / best) | Load H2D GB/s (median / best) "
                + "| both at once, aggregate GB/s |");
        out.add("|---|---|---|---|---|");
        try (GpuHostBuffer host = new GpuHostBuffer(2 * BATCH);
                CudaDeviceBackend backend = CudaDeviceBackend.create(new int[] {0}, List.of(host.region()))) {
            long devA;
            long devB;
            bind(backend);
            devA = Cuda.memAlloc(BATCH);
            devB = Cuda.memAlloc(BATCH);
            Cuda.memsetD8(devA, 0x5a, BATCH);
            Cuda.memsetD8(devB, 0x33, BATCH);
            ExecutorService saveLane = Executors.newSingleThreadExecutor(r -> new Thread(r, "gpu0-save"));
            ExecutorService loadLane = Executors.newSingleThreadExecutor(r -> new Thread(r, "gpu0-load"));
            try (DeviceCopier copier = backend.openCopier(0)) {
                for (long block : new long[] {64 << 10, 256 << 10, 2 << 20, BATCH}) {
                    RangePlan save = scattered(devA, host.address, block, 7);
                    RangePlan load =
                            scattered(devB, host.address + BATCH, block, 9).reversed();
                    double[] d2h = new double[RUNS];
                    double[] h2d = new double[RUNS];
                    double[] both = new double[RUNS];
                    saveLane.submit(() -> copier.copyToHost(save)).get(); // warm-up
                    loadLane.submit(() -> copier.copyToDevice(load)).get();
                    for (int r = 0; r < RUNS; r++) {
                        long t0 = System.nanoTime();
                        saveLane.submit(() -> copier.copyToHost(save)).get();
                        d2h[r] = BATCH / ((System.nanoTime() - t0) / 1e9) / 1e9;
                        t0 = System.nanoTime();
                        loadLane.submit(() -> copier.copyToDevice(load)).get();
                        h2d[r] = BATCH / ((System.nanoTime() - t0) / 1e9) / 1e9;
                        CyclicBarrier go = new CyclicBarrier(3);
                        Future<?> s = saveLane.submit(() -> {
                            go.await();
                            copier.copyToHost(save);
                            return null;
                        });
                        Future<?> l = loadLane.submit(() -> {
                            go.await();
                            copier.copyToDevice(load);
                            return null;
                        });
                        go.await();
                        t0 = System.nanoTime();
                        s.get();
                        l.get();
                        both[r] = 2 * BATCH / ((System.nanoTime() - t0) / 1e9) / 1e9;
                    }
                    out.add(String.format(
                            "| %s | %d | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f |",
                            block == BATCH ? "1 GiB (one range)" : (block >> 10) + " KiB",
                            save.size(),
                            median(d2h),
                            max(d2h),
                            median(h2d),
                            max(h2d),
                            median(both),
                            max(both)));
                    assertThat(max(d2h)).isPositive();
                }
            } finally {
                saveLane.shutdown();
                loadLane.shutdown();
                bind(backend);
                Cuda.memFree(devA);
                Cuda.memFree(devB);
            }
            assertThat(host.get(0)).isEqualTo((byte) 0x5a);
        }
        report(out);
    }

    @Test
    void firstDmaIntoFreshHostMemoryVersusWarm() throws Exception {
        assumeTrue(CudaDeviceBackend.isAvailable(), "no CUDA driver or GPU");
        List<String> out = new ArrayList<>();
        out.add(
                "### First DMA into fresh (registered, pre-touched) host memory vs the same memory again, 2 MiB blocks");
        out.add("");
        out.add("| pass | D2H GB/s | H2D GB/s |");
        out.add("|---|---|---|");
        try (GpuHostBuffer host = new GpuHostBuffer(4 * BATCH);
                CudaDeviceBackend backend = CudaDeviceBackend.create(new int[] {0}, List.of(host.region()))) {
            bind(backend);
            long dev = Cuda.memAlloc(BATCH);
            Cuda.memsetD8(dev, 0x11, BATCH);
            ExecutorService lane = Executors.newSingleThreadExecutor();
            try (DeviceCopier copier = backend.openCopier(0)) {
                String[] names = {"fresh region A", "fresh region B", "region A again", "region B again"};
                long[] offsets = {0, BATCH, 0, BATCH};
                for (int i = 0; i < 4; i++) {
                    RangePlan d2h = scattered(dev, host.address + offsets[i], 2 << 20, 3 + i);
                    long t0 = System.nanoTime();
                    lane.submit(() -> copier.copyToHost(d2h)).get();
                    double a = BATCH / ((System.nanoTime() - t0) / 1e9) / 1e9;
                    RangePlan h2d = scattered(dev, host.address + 2 * BATCH + offsets[i], 2 << 20, 5 + i)
                            .reversed();
                    t0 = System.nanoTime();
                    lane.submit(() -> copier.copyToDevice(h2d)).get();
                    double b = BATCH / ((System.nanoTime() - t0) / 1e9) / 1e9;
                    out.add(String.format("| %s | %.1f | %.1f |", names[i], a, b));
                }
            } finally {
                lane.shutdown();
                bind(backend);
                Cuda.memFree(dev);
            }
        }
        report(out);
    }

    @Test
    void poolReadinessPerGib() throws Exception {
        assumeTrue(CudaDeviceBackend.isAvailable(), "no CUDA driver or GPU");
        long size = Long.getLong("pega.gpu.poolGiB", 8) * GIB;
        double gib = size / (double) GIB;
        List<String> out = new ArrayList<>();
        out.add("### Pool readiness: " + (size / GIB) + " GiB, seconds per GiB");
        out.add("");
        out.add("| method | mmap + parallel pre-touch | cuMemHostRegister | total | s/GiB |");
        out.add("|---|---|---|---|---|");
        for (boolean huge : new boolean[] {false, true}) {
            long t0 = System.nanoTime();
            try (PinnedMemoryPool pool = PinnedMemoryPool.create(new PoolConfig(size, 1, huge, -1, 0, 0))) {
                double mapped = (System.nanoTime() - t0) / 1e9;
                try (CudaDeviceBackend b = CudaDeviceBackend.create(new int[] {0}, pool.regions())) {
                    double total = (System.nanoTime() - t0) / 1e9;
                    out.add(String.format(
                            "| pool (%s, %d cores) | %.2f s | %.2f s | %.2f s | %.3f |",
                            huge ? "huge pages requested" : "4 KiB pages",
                            Runtime.getRuntime().availableProcessors(),
                            mapped,
                            b.registrationSeconds(),
                            total,
                            total / gib));
                }
            }
        }
        try (CudaDeviceBackend b = CudaDeviceBackend.create(new int[] {0}, List.of())) {
            bind(b);
            long t0 = System.nanoTime();
            long p = Cuda.memHostAlloc(size, Cuda.CU_MEMHOSTALLOC_PORTABLE);
            double alloc = (System.nanoTime() - t0) / 1e9;
            Cuda.memFreeHost(p);
            out.add(String.format(
                    "| cuMemHostAlloc (= cudaHostAlloc), one thread | - | - | %.2f s | %.3f |", alloc, alloc / gib));
        }
        report(out);
    }

    /**
     * 1 GiB of {@code block}-sized device-to-host ranges: host packed in order, device blocks in a shuffled order (no
     * merging).
     */
    static RangePlan scattered(long device, long host, long block, long seed) {
        int n = (int) (BATCH / block);
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Random r = new Random(seed);
        for (int i = n - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        RangePlan p = new RangePlan(n);
        for (int i = 0; i < n; i++) {
            p.add(device + (long) order[i] * block, host + (long) i * block, block);
        }
        return p;
    }

    private static void bind(CudaDeviceBackend b) {
        Cuda.ctxSetCurrent(b.device(0).ctx);
    }

    private static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }

    private static double max(double[] v) {
        return Arrays.stream(v).max().orElse(0);
    }

    private static void report(List<String> lines) throws IOException {
        lines.add("");
        lines.forEach(System.out::println);
        String file = System.getProperty("pega.gpu.report");
        if (file != null) {
            Files.write(Path.of(file), lines, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
    }
}
