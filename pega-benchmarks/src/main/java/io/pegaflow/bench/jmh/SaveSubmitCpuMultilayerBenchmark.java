package io.pegaflow.bench.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@code cpu_path/save_submit_cpu_multilayer_61/N}: the Save call alone (validation, dedup, 61 pool allocations,
 * copy plan and lane hand-off, queueing to the sealer) for 61 layers of 1-byte blocks; the flush runs untimed after
 * it.
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar SaveSubmitCpuMultilayerBenchmark -f 1 -wi 3 -i 5
 * </pre>
 */
public class SaveSubmitCpuMultilayerBenchmark extends SaveBenchmark {
    @Param({"1024", "8192", "32768"})
    int n;

    @Param({"host", "nocopy"})
    String backend;

    @Override
    CpuPathFixture createFixture() {
        return CpuPathFixture.create(n, 61, 1, CpuPathFixture.Layout.SHARED, BenchBackend.of(backend));
    }

    @Benchmark
    public void save_submit_cpu_multilayer_61() {
        fixture.save();
    }

    @TearDown(Level.Invocation)
    public void afterInvocation() {
        fixture.flush();
    }
}
