package io.pegaflow.bench.jmh;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code cpu_path/save_submit_cpu_multilayer_61/N}: the Save call alone (validation, dedup, 61 pool allocations,
 * copy plan and lane hand-off, queueing to the sealer) for 61 layers of 1-byte blocks; the flush runs untimed after
 * it.
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar SaveSubmitCpuMultilayerBenchmark -f 1 -wi 3 -i 5
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(
        value = 2,
        jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class SaveSubmitCpuMultilayerBenchmark {
    @Param({"1024", "8192", "32768"})
    int n;

    @Param({"host", "nocopy"})
    String backend;

    private CpuPathFixture fixture;
    private long salt;

    @Setup(Level.Trial)
    public void setUp() {
        fixture = CpuPathFixture.create(n, 61, 1, CpuPathFixture.Layout.SHARED, BenchBackend.of(backend));
    }

    @Setup(Level.Invocation)
    public void nextInvocation() {
        fixture.cleanup();
        fixture.setSalt(++salt);
    }

    @Benchmark
    public void save_submit_cpu_multilayer_61() {
        fixture.save();
    }

    @TearDown(Level.Invocation)
    public void afterInvocation() {
        fixture.flush();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        fixture.close();
    }
}
