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
 * {@code cpu_path/query_prefetch_lease/N}: QueryPrefetch of N resident hashes (all hit, asserted) including the lease
 * it creates, under a fresh req_id each time; the index was primed once with N blocks of 1 KiB, and the lease is
 * released untimed. No bytes move, so there is no {@code nocopy} variant.
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar QueryPrefetchLeaseBenchmark -f 1 -wi 3 -i 5 -prof gc
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
public class QueryPrefetchLeaseBenchmark {
    @Param({"128", "1024", "8192", "32768"})
    int n;

    /** {@code reference} (salt ‖ index, as the reference bench) or {@code random} (production-like). */
    @Param({"reference"})
    String hashes;

    private CpuPathFixture fixture;
    private String reqId;
    private byte[] lease;
    private long iteration;

    @Setup(Level.Trial)
    public void setUp() {
        fixture = CpuPathFixture.create(n, 1, 1024, CpuPathFixture.Layout.SHARED, BenchBackend.HOST)
                .hashes(CpuPathFixture.HashKind.of(hashes));
        fixture.setSalt(1);
        fixture.save();
        fixture.flush();
    }

    @Setup(Level.Invocation)
    public void nextInvocation() {
        reqId = "query-" + (++iteration);
    }

    @Benchmark
    public byte[] query_prefetch_lease() {
        lease = fixture.queryAllHit(reqId);
        return lease;
    }

    @TearDown(Level.Invocation)
    public void afterInvocation() {
        fixture.release(lease);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        fixture.close();
    }
}
