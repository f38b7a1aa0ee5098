package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.plan.RangePlan;
import io.pegaflow.sys.cuda.Cuda;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Measures the cuda copier without gRPC: every copy mode against the contiguous copy for Qwen3-8B-shaped Saves and
 * Loads of scattered blocks, both directions at once, and how long the pool takes to become DMA-ready. Numbers go to stdout and,
 * when {@code -Dpega.gpu.report=FILE} is set, are appended to FILE as markdown. Asserts only sanity, never a speed.
 */
@Tag("gpu")
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class CudaCopyBenchGpuTest {
    /** The submitter counts the batch-submitter table tries: {@code -Dpega.gpu.submitters=1,2,3,4,6} (default 1,2,3). */
    private static final int[] SUBMITTERS = Arrays.stream(
                    System.getProperty("pega.gpu.submitters", "1,2,3").split(","))
            .map(String::strip)
            .mapToInt(Integer::parseInt)
            .toArray();

    private static final long GIB = 1L << 30;
    private static final long BATCH = GIB;
    private static final int RUNS = 5;

    /**
     * Every copy mode against the contiguous copy of the same bytes in the same run, for Qwen3-8B-shaped requests of
     * 36 layers at each block size (docs/gpu.md, "Copy methods"): Save, Load into scattered block ids, both at once.
     */
    @Test
    void copyModesAgainstTheContiguousCopy() throws Exception {
        assumeTrue(CudaDeviceBackend.isAvailable(), "no CUDA driver or GPU");
        CopyWorkload[] workloads = CopyWorkload.qwen3_8b();
        long most =
                Arrays.stream(workloads).mapToLong(CopyWorkload::bytes).max().orElseThrow();
        List<String> out = new ArrayList<>();
        out.add("### Copy modes against the contiguous copy (Java copier, no gRPC; 36 layers, scattered block ids)");
        out.add("");
        out.add("GB/s, median of " + RUNS + " (both at once: of 3); ratio = mode / contiguous copy of the same bytes,"
                + " measured just before. auto's pick in brackets.");
        out.add("");
        out.add("| workload | ranges | GiB | contiguous D2H / H2D / both | mode | Save D2H | ratio | Load H2D | ratio "
                + "| both at once | ratio |");
        out.add("|---|---|---|---|---|---|---|---|---|---|---|");
        try (GpuHostBuffer host = new GpuHostBuffer(2 * most);
                CudaDeviceBackend backend = CudaDeviceBackend.create(new int[] {0}, List.of(host.region()));
                CopyBench bench = new CopyBench()) {
            bind(backend);
            long devA = Cuda.memAlloc(2 * most);
            long devB = Cuda.memAlloc(2 * most);
            try {
                Cuda.memsetD8(devA, 0x5a, 2 * most);
                for (CopyWorkload w : workloads) {
                    RangePlan save = w.plan(devA, host.address, 7);
                    RangePlan load = w.plan(devB, host.address + most, 9).reversed();
                    double[] contiguous;
                    try (DeviceCopier one = backend.openCopier(0, config(CopyMode.PER_RANGE))) {
                        RangePlan up = CopyBench.oneRange(devA, host.address, w.bytes());
                        RangePlan down = CopyBench.oneRange(devB, host.address + most, w.bytes());
                        contiguous = new double[] {
                            bench.save(one, up, RUNS), bench.load(one, down, RUNS), bench.both(one, up, down, 3)
                        };
                    }
                    CopyMode picked = new CopyPolicy(
                                    CudaCopyConfig.defaults(),
                                    backend.copyCapabilities(0).batch,
                                    backend.copyCapabilities(0).kernel != null)
                            .choose(PlanShape.of(save));
                    int submitters = new CopyPolicy(CudaCopyConfig.defaults(), true, true)
                            .submitters(picked, PlanShape.of(save));
                    for (CopyMode mode : CopyMode.values()) {
                        try (DeviceCopier c = backend.openCopier(0, config(mode))) {
                            double d2h = bench.save(c, save, RUNS);
                            double h2d = bench.load(c, load, RUNS);
                            double both = bench.both(c, save, load, 3);
                            out.add(String.format(
                                    "| %s | %d | %.2f | %.1f / %.1f / %.1f | %s | %.1f | %.2f | %.1f | %.2f | %.1f | %.2f |",
                                    w.name(),
                                    save.size(),
                                    w.bytes() / (double) GIB,
                                    contiguous[0],
                                    contiguous[1],
                                    contiguous[2],
                                    mode == CopyMode.AUTO
                                            ? "auto (" + picked.key() + ", " + submitters + " submitters)"
                                            : mode.key(),
                                    d2h,
                                    d2h / contiguous[0],
                                    h2d,
                                    h2d / contiguous[1],
                                    both,
                                    both / contiguous[2]));
                            assertThat(d2h).isPositive();
                        }
                    }
                }
            } finally {
                bind(backend);
                Cuda.memFree(devA);
                Cuda.memFree(devB);
            }
            assertThat(host.get(0)).isEqualTo((byte) 0x5a);
        }
        CopyBench.report(out);
    }

    /**
     * The batch issued by 1, 2 and 3 submitting threads (decision 0015) against the contiguous copy, for the Qwen3-8B
     * workloads from 16 KiB to 256 KiB: Save, Load into scattered ids, both at once. The split is forced here
     * whatever the range size, so the table also shows where it stops mattering.
     */
    @Test
    void batchSubmittersAgainstTheContiguousCopy() throws Exception {
        assumeTrue(CudaDeviceBackend.isAvailable(), "no CUDA driver or GPU");
        CopyWorkload[] all = CopyWorkload.qwen3_8b();
        CopyWorkload[] workloads = {all[1], all[2], all[3], all[4]};
        long most =
                Arrays.stream(workloads).mapToLong(CopyWorkload::bytes).max().orElseThrow();
        List<String> out = new ArrayList<>();
        out.add("### Batch submitters against the contiguous copy (Java copier, no gRPC; 36 layers, scattered ids)");
        out.add("");
        out.add("GB/s, median of " + RUNS + " (both at once: of 3); ratio = to the contiguous copy of the same bytes,"
                + " measured just before; calls of " + CudaCopyConfig.defaults().batchMaxRanges() + " ranges.");
        out.add("");
        out.add("| workload | ranges | contiguous D2H / H2D / both | submitters | Save D2H | ratio | Load H2D | ratio "
                + "| both at once | ratio |");
        out.add("|---|---|---|---|---|---|---|---|---|---|");
        try (GpuHostBuffer host = new GpuHostBuffer(2 * most);
                CudaDeviceBackend backend = CudaDeviceBackend.create(new int[] {0}, List.of(host.region()));
                CopyBench bench = new CopyBench()) {
            bind(backend);
            long devA = Cuda.memAlloc(2 * most);
            long devB = Cuda.memAlloc(2 * most);
            try {
                Cuda.memsetD8(devA, 0x5a, 2 * most);
                for (CopyWorkload w : workloads) {
                    RangePlan save = w.plan(devA, host.address, 7);
                    RangePlan load = w.plan(devB, host.address + most, 9).reversed();
                    double[] contiguous;
                    try (DeviceCopier one = backend.openCopier(0, config(CopyMode.PER_RANGE))) {
                        RangePlan up = CopyBench.oneRange(devA, host.address, w.bytes());
                        RangePlan down = CopyBench.oneRange(devB, host.address + most, w.bytes());
                        contiguous = new double[] {
                            bench.save(one, up, RUNS), bench.load(one, down, RUNS), bench.both(one, up, down, 3)
                        };
                    }
                    for (int n : SUBMITTERS) {
                        CudaCopyConfig d = CudaCopyConfig.defaults();
                        CudaCopyConfig c = new CudaCopyConfig(
                                CopyMode.BATCH,
                                d.kernelMaxCtas(),
                                d.kernelMaxLaunchBytes(),
                                0,
                                0,
                                d.batchMaxRanges(),
                                n,
                                Long.MAX_VALUE,
                                2);
                        try (DeviceCopier copier = backend.openCopier(0, c)) {
                            double d2h = bench.save(copier, save, RUNS);
                            double h2d = bench.load(copier, load, RUNS);
                            double both = bench.both(copier, save, load, 3);
                            out.add(String.format(
                                    "| %s | %d | %.1f / %.1f / %.1f | %d | %.1f | %.2f | %.1f | %.2f | %.1f | %.2f |",
                                    w.name(),
                                    save.size(),
                                    contiguous[0],
                                    contiguous[1],
                                    contiguous[2],
                                    n,
                                    d2h,
                                    d2h / contiguous[0],
                                    h2d,
                                    h2d / contiguous[1],
                                    both,
                                    both / contiguous[2]));
                            assertThat(d2h).isPositive();
                        }
                    }
                }
            } finally {
                bind(backend);
                Cuda.memFree(devA);
                Cuda.memFree(devB);
            }
        }
        CopyBench.report(out);
    }

    private static CudaCopyConfig config(CopyMode mode) {
        return CudaCopyConfig.defaults().withMode(mode);
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
        CopyBench.report(out);
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
        CopyBench.report(out);
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
}
