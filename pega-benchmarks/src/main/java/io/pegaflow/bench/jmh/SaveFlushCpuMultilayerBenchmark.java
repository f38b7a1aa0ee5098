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
 * {@code cpu_path/save_flush_cpu_multilayer_61/N}: one Save with 61 layers of 1-byte blocks that all point at the
 * same device bytes, plus the flush: the per-slot CPU cost of the save and sealing pipeline (N·61 slots) with almost
 * no bytes to move. Layer ids ascend in request order here (the Java port sorts them), so every block takes the
 * ordered seal fast path; the reference only got it by hash-map luck.
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar SaveFlushCpuMultilayerBenchmark -f 1 -wi 3 -i 5 -prof gc
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
public class SaveFlushCpuMultilayerBenchmark {
    @Param({"128", "1024", "8192", "32768"})
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
    public void save_flush_cpu_multilayer_61() {
        fixture.save();
        fixture.flush();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        fixture.close();
    }
}
