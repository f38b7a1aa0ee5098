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
 * {@code cpu_path/save_flush_dtoh_multilayer_61/N}: one Save of 61 layers × N blocks of 1 KiB from distinct
 * per-layer device regions, plus the flush (N = 8192 moves 488 MiB). On the host backend the "DtoH" copy is a
 * memcpy out of {@code /dev/shm}; {@code -p backend=nocopy} leaves the bookkeeping.
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar SaveFlushDtohMultilayerBenchmark -f 1 -wi 3 -i 5
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
public class SaveFlushDtohMultilayerBenchmark {
    @Param({"128", "1024", "8192"})
    int n;

    @Param({"host", "nocopy"})
    String backend;

    private CpuPathFixture fixture;
    private long salt;

    @Setup(Level.Trial)
    public void setUp() {
        fixture = CpuPathFixture.create(n, 61, 1024, CpuPathFixture.Layout.DISTINCT, BenchBackend.of(backend));
    }

    @Setup(Level.Invocation)
    public void nextInvocation() {
        fixture.cleanup();
        fixture.setSalt(++salt);
    }

    @Benchmark
    public void save_flush_dtoh_multilayer_61() {
        fixture.save();
        fixture.flush();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        fixture.close();
    }
}
