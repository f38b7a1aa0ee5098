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
 * {@code cpu_path/save_flush_unique/N}: one Save of N unique 1 KiB blocks (1 layer) plus the sealing flush, timed
 * together. Every invocation uses a fresh salt, and the index is drained untimed before it, so nothing is ever
 * evicted inside the timed region. Bookkeeping alone: {@code -p backend=nocopy}.
 *
 * <p>Checks: on (the engine has no switch to disable them). Run:
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar SaveFlushUniqueBenchmark -f 1 -wi 3 -i 5 -prof gc
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
public class SaveFlushUniqueBenchmark {
    @Param({"128", "1024", "8192", "32768"})
    int n;

    @Param({"host", "nocopy"})
    String backend;

    /** {@code reference} (salt ‖ index, as the reference bench) or {@code random} (production-like). */
    @Param({"reference"})
    String hashes;

    private CpuPathFixture fixture;
    private long salt;

    @Setup(Level.Trial)
    public void setUp() {
        fixture = CpuPathFixture.create(n, 1, 1024, CpuPathFixture.Layout.SHARED, BenchBackend.of(backend))
                .hashes(CpuPathFixture.HashKind.of(hashes));
    }

    @Setup(Level.Invocation)
    public void nextInvocation() {
        fixture.cleanup();
        fixture.setSalt(++salt);
    }

    @Benchmark
    public void save_flush_unique() {
        fixture.save();
        fixture.flush();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        fixture.close();
    }
}
