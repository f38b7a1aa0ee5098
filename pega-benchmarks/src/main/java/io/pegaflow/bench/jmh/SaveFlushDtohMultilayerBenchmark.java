package io.pegaflow.bench.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;

/**
 * {@code cpu_path/save_flush_dtoh_multilayer_61/N}: one Save of 61 layers × N blocks of 1 KiB from distinct
 * per-layer device regions, plus the flush (N = 8192 moves 488 MiB). On the host backend the "DtoH" copy is a
 * memcpy out of {@code /dev/shm}; {@code -p backend=nocopy} leaves the bookkeeping.
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar SaveFlushDtohMultilayerBenchmark -f 1 -wi 3 -i 5
 * </pre>
 */
public class SaveFlushDtohMultilayerBenchmark extends SaveBenchmark {
    @Param({"128", "1024", "8192"})
    int n;

    @Param({"host", "nocopy"})
    String backend;

    @Override
    CpuPathFixture createFixture() {
        return CpuPathFixture.create(n, 61, 1024, CpuPathFixture.Layout.DISTINCT, BenchBackend.of(backend));
    }

    @Benchmark
    public void save_flush_dtoh_multilayer_61() {
        fixture.save();
        fixture.flush();
    }
}
