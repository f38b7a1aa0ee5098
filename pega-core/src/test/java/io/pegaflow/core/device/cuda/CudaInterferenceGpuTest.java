package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.kernel.plan.RangePlan;
import io.pegaflow.sys.cuda.Cuda;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What each copy mode costs a model beside it: an HBM-bound kernel in another process ({@code hbm_load.py}, as vLLM
 * runs beside pega-server) timed alone and while this process's save and load lanes copy without pause. Reports the
 * slowdown per mode and fragment size; asserts nothing about speed.
 */
@Tag("gpu")
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class CudaInterferenceGpuTest {
    private static final int LAUNCHES = 300;

    @Test
    void hbmBoundKernelAloneAndWhileSaveAndLoadRun() throws Exception {
        assumeTrue(CudaDeviceBackend.isAvailable(), "no CUDA driver or GPU");
        assumeTrue(PythonProducer.usable() && HbmLoad.script() != null, "no python3 with torch and hbm_load.py");
        CopyWorkload[] workloads = {
            new CopyWorkload("kv-first 8-token (16 KiB)", 8, 1024, 2, 16 << 10),
            new CopyWorkload("kv-first 16-token (32 KiB)", 8, 1024, 2, 32 << 10),
            new CopyWorkload("blocks-first 16-token (64 KiB)", 8, 1024, 1, 64 << 10),
        };
        List<CudaCopyConfig> configs = new ArrayList<>();
        configs.add(CudaCopyConfig.defaults());
        configs.add(CudaCopyConfig.defaults().withMode(CopyMode.PER_RANGE));
        configs.add(CudaCopyConfig.defaults().withMode(CopyMode.BATCH));
        configs.add(CudaCopyConfig.defaults().withMode(CopyMode.BATCH).withSubmitters(1));
        for (int ctas : new int[] {16}) {
            CudaCopyConfig d = CudaCopyConfig.defaults();
            configs.add(new CudaCopyConfig(
                    CopyMode.KERNEL,
                    ctas,
                    d.kernelMaxLaunchBytes(),
                    d.kernelBelowBytes(),
                    d.serializeBelowBytes(),
                    d.batchMaxRanges()));
        }
        long most = 2L * workloads[2].bytes();
        List<String> out = new ArrayList<>();
        out.add("### Interference: an HBM-bound kernel in another process, alone and while Save and Load copy");
        try (GpuHostBuffer host = new GpuHostBuffer(2 * most);
                CudaDeviceBackend backend = CudaDeviceBackend.create(new int[] {0}, List.of(host.region()));
                CopyBench bench = new CopyBench();
                HbmLoad hbm = HbmLoad.start()) {
            out.add("");
            out.add("HBM kernel: " + hbm.ready + "; " + LAUNCHES + " launches per measurement; slowdown = time"
                    + " while copying / mean of the times alone just before and after.");
            out.add("");
            out.add("| workload | mode | alone ms | with Save+Load ms | slowdown | copy GB/s meanwhile (both lanes) |");
            out.add("|---|---|---|---|---|---|");
            Cuda.ctxSetCurrent(backend.device(0).ctx);
            long devA = Cuda.memAlloc(most);
            long devB = Cuda.memAlloc(most);
            try {
                for (CopyWorkload w : workloads) {
                    RangePlan save = w.plan(devA, host.address, 3);
                    RangePlan load = w.plan(devB, host.address + most, 5).reversed();
                    for (CudaCopyConfig config : configs) {
                        try (DeviceCopier c = backend.openCopier(0, config)) {
                            bench.save(c, save, 1);
                            bench.load(c, load, 1);
                            double before = hbm.measure(LAUNCHES);
                            AtomicBoolean stop = new AtomicBoolean();
                            AtomicLong bytes = new AtomicLong();
                            Future<?> s =
                                    bench.saveLane.submit(() -> loop(stop, bytes, () -> c.copyToHost(save), save));
                            Future<?> l =
                                    bench.loadLane.submit(() -> loop(stop, bytes, () -> c.copyToDevice(load), load));
                            Thread.sleep(50);
                            long b0 = bytes.get();
                            long t0 = System.nanoTime();
                            double busy = hbm.measure(LAUNCHES);
                            double copied = (bytes.get() - b0) / ((System.nanoTime() - t0) / 1e9) / 1e9;
                            stop.set(true);
                            s.get(60, TimeUnit.SECONDS);
                            l.get(60, TimeUnit.SECONDS);
                            double after = hbm.measure(LAUNCHES);
                            double alone = (before + after) / 2;
                            out.add(String.format(
                                    "| %s | %s | %.1f | %.1f | %.2fx | %.1f |",
                                    w.name(), label(config), alone, busy, busy / alone, copied));
                            assertThat(busy).isPositive();
                        }
                    }
                }
            } finally {
                Cuda.ctxSetCurrent(backend.device(0).ctx);
                Cuda.memFree(devA);
                Cuda.memFree(devB);
            }
        }
        CopyBench.report(out);
    }

    private static String label(CudaCopyConfig c) {
        return c.mode() == CopyMode.KERNEL
                ? "kernel, " + c.kernelMaxCtas() + " CTAs"
                : c.mode() == CopyMode.PER_RANGE
                        ? c.mode().key()
                        : c.mode().key() + ", " + c.batchSubmitters() + " submitters";
    }

    private static void loop(AtomicBoolean stop, AtomicLong bytes, Runnable copy, RangePlan plan) {
        while (!stop.get()) {
            copy.run();
            bytes.addAndGet(plan.totalBytes());
        }
    }
}
