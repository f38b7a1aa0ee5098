package io.pegaflow.core.device.cuda;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.kernel.plan.RangePlan;
import io.pegaflow.sys.cuda.Cuda;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sweeps behind the copy defaults (docs/gpu.md, "Copy methods"): the kernel's CTAs and threads, the batch call
 * size, and both lanes at once with and without taking turns. Runs only with
 * {@code -Dpega.gpu.tuning=1} (gpu-tests/run.sh TUNING=1); prints tables, asserts nothing.
 */
@Tag("gpu")
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class CudaCopyTuningGpuTest {
    private static final long KIB = 1024;
    private static final int RUNS = 3;

    private static CudaCopyConfig config(CopyMode mode, int ctas, long serializeBelow, int batchMaxRanges) {
        CudaCopyConfig d = CudaCopyConfig.defaults();
        return new CudaCopyConfig(
                mode, ctas, d.kernelMaxLaunchBytes(), d.kernelBelowBytes(), serializeBelow, batchMaxRanges);
    }

    @Test
    void sweepKernelFootprintBatchSizeAndTurns() throws Exception {
        assumeTrue(Integer.getInteger("pega.gpu.tuning", 0) > 0, "tuning runs only with -Dpega.gpu.tuning=1");
        assumeTrue(CudaDeviceBackend.isAvailable(), "no CUDA driver or GPU");
        CopyWorkload[] w = {
            new CopyWorkload("4 KiB", 16, 4096, 2, 4 * KIB),
            new CopyWorkload("16 KiB", 16, 2048, 2, 16 * KIB),
            new CopyWorkload("32 KiB", 16, 1024, 2, 32 * KIB),
            new CopyWorkload("64 KiB", 16, 1024, 1, 64 * KIB),
            new CopyWorkload("256 KiB", 16, 128, 2, 256 * KIB),
            new CopyWorkload("2 MiB", 16, 16, 2, 2048 * KIB),
        };
        boolean kernels = Integer.getInteger("pega.gpu.tuning", 0) > 1;
        long most = 1L << 30;
        List<String> out = new ArrayList<>();
        try (GpuHostBuffer host = new GpuHostBuffer(2 * most);
                CudaDeviceBackend backend = CudaDeviceBackend.create(new int[] {0}, List.of(host.region()));
                CopyBench bench = new CopyBench()) {
            Cuda.ctxSetCurrent(backend.device(0).ctx);
            long devA = Cuda.memAlloc(2 * most);
            long devB = Cuda.memAlloc(2 * most);
            try {
                out.add("### Tuning: contiguous 1 GiB copy");
                out.add("");
                try (DeviceCopier one = backend.openCopier(0, config(CopyMode.PER_RANGE, 16, 0, 1024))) {
                    RangePlan up = CopyBench.oneRange(devA, host.address, most);
                    RangePlan down = CopyBench.oneRange(devB, host.address + most, most);
                    out.add(String.format(
                            "D2H %.1f, H2D %.1f, both %.1f GB/s",
                            bench.save(one, up, RUNS), bench.load(one, down, RUNS), bench.both(one, up, down, RUNS)));
                }
                out.add("");
                out.add("### Tuning: kernel CTAs of 512 threads (GB/s D2H / H2D)");
                out.add("");
                out.add("| fragment | 4 CTAs | 8 CTAs | 16 CTAs | 32 CTAs |");
                out.add("|---|---|---|---|---|");
                for (CopyWorkload x : kernels ? new CopyWorkload[] {w[0], w[1], w[2]} : new CopyWorkload[0]) {
                    RangePlan save = x.plan(devA, host.address, 1);
                    RangePlan load = x.plan(devB, host.address + most, 2).reversed();
                    StringBuilder row = new StringBuilder("| " + x.name() + " |");
                    for (int ctas : new int[] {4, 8, 16, 32}) {
                        try (DeviceCopier c = backend.openCopier(0, config(CopyMode.KERNEL, ctas, 0, 1024))) {
                            row.append(String.format(
                                    " %.1f / %.1f |", bench.save(c, save, RUNS), bench.load(c, load, RUNS)));
                        }
                    }
                    out.add(row.toString());
                }
                out.add("");
                out.add("### Tuning: ranges per cuMemcpyBatchAsync call (GB/s D2H / H2D)");
                out.add("");
                out.add("| fragment | 64 | 128 | 256 | 512 | 1024 |");
                out.add("|---|---|---|---|---|---|");
                for (CopyWorkload x : new CopyWorkload[] {w[1], w[2], w[3], w[4]}) {
                    RangePlan save = x.plan(devA, host.address, 1);
                    RangePlan load = x.plan(devB, host.address + most, 2).reversed();
                    StringBuilder row = new StringBuilder("| " + x.name() + " |");
                    for (int max : new int[] {64, 128, 256, 512, 1024}) {
                        try (DeviceCopier c = backend.openCopier(0, config(CopyMode.BATCH, 16, 0, max))) {
                            row.append(String.format(
                                    " %.1f / %.1f |", bench.save(c, save, RUNS), bench.load(c, load, RUNS)));
                        }
                    }
                    out.add(row.toString());
                }
                out.add("");
                out.add("### Tuning: Save and Load at once, aggregate GB/s");
                out.add("");
                out.add("| fragment | batch 256 | batch 1024 | batch 256, lanes take turns | kernel 16 CTAs |");
                out.add("|---|---|---|---|---|");
                for (CopyWorkload x : new CopyWorkload[] {w[1], w[2], w[3], w[4], w[5]}) {
                    RangePlan save = x.plan(devA, host.address, 1);
                    RangePlan load = x.plan(devB, host.address + most, 2).reversed();
                    StringBuilder row = new StringBuilder("| " + x.name() + " |");
                    for (CudaCopyConfig c : new CudaCopyConfig[] {
                        config(CopyMode.BATCH, 16, 0, 256),
                        config(CopyMode.BATCH, 16, 0, 1024),
                        config(CopyMode.BATCH, 16, 1L << 30, 256),
                        config(CopyMode.KERNEL, 16, 0, 256)
                    }) {
                        try (DeviceCopier copier = backend.openCopier(0, c)) {
                            row.append(String.format(" %.1f |", bench.both(copier, save, load, RUNS)));
                        }
                    }
                    out.add(row.toString());
                }
            } finally {
                Cuda.ctxSetCurrent(backend.device(0).ctx);
                Cuda.memFree(devA);
                Cuda.memFree(devB);
            }
        }
        CopyBench.report(out);
    }
}
