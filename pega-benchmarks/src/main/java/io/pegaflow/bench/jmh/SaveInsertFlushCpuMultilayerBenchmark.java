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
 * {@code cpu_path/save_insert_flush_cpu_multilayer_61/N}: the Save runs untimed, then the flush is timed, i.e. what
 * the sealing worker still has to do once the Save returned (slot assembly, sealing, index insert). As in the
 * reference, the sealer starts on the batch as soon as the Save queued it, so this measures the part that was not
 * already done by the time the timer starts.
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar SaveInsertFlushCpuMultilayerBenchmark -f 1 -wi 3 -i 5
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
public class SaveInsertFlushCpuMultilayerBenchmark {
    @Param({"1024", "8192", "32768"})
    int n;

    @Param({"host"})
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
        fixture.save();
    }

    @Benchmark
    public void save_insert_flush_cpu_multilayer_61() {
        fixture.flush();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        fixture.close();
    }
}
