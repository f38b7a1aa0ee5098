package io.pegaflow.bench.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;

/**
 * {@code cpu_path/save_flush_cpu_multilayer_61/N}: one Save with 61 layers of 1-byte blocks that all point at the
 * same device bytes, plus the flush: the per-slot CPU cost of the save and sealing pipeline (N·61 slots) with almost
 * no bytes to move. Layer ids ascend in request order here (the Java port sorts them), so every block takes the
 * ordered seal fast path; the reference only got it by hash-map luck.
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar SaveFlushCpuMultilayerBenchmark -f 1 -wi 3 -i 5 -prof gc
 * </pre>
 */
public class SaveFlushCpuMultilayerBenchmark extends SaveBenchmark {
    @Param({"128", "1024", "8192", "32768"})
    int n;

    @Param({"host", "nocopy"})
    String backend;

    @Override
    CpuPathFixture createFixture() {
        return CpuPathFixture.create(n, 61, 1, CpuPathFixture.Layout.SHARED, BenchBackend.of(backend));
    }

    @Benchmark
    public void save_flush_cpu_multilayer_61() {
        fixture.save();
        fixture.flush();
    }
}
