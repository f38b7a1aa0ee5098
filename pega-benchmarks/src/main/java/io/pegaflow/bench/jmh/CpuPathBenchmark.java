package io.pegaflow.bench.jmh;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The run settings and the per-trial {@link CpuPathFixture} shared by the {@code cpu_path} benchmarks. The
 * {@code @Param}s stay in each subclass because the reference gives every bench its own N range and backends; JMH
 * reads these class annotations and helper methods through the hierarchy.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(
        value = 2,
        jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public abstract class CpuPathBenchmark {
    CpuPathFixture fixture;

    /** The fixture for this trial's params, in the state the timed region expects. */
    abstract CpuPathFixture createFixture();

    @Setup(Level.Trial)
    public void setUp() {
        fixture = createFixture();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        fixture.close();
    }
}
