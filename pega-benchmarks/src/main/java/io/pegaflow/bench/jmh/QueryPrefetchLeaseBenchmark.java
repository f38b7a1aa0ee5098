package io.pegaflow.bench.jmh;

import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@code cpu_path/query_prefetch_lease/N}: QueryPrefetch of N resident hashes (all hit, asserted) including the lease
 * it creates, under a fresh req_id each time; the index was primed once with N blocks of 1 KiB, and the lease is
 * released untimed. No bytes move, so there is no {@code nocopy} variant.
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar QueryPrefetchLeaseBenchmark -f 1 -wi 3 -i 5 -prof gc
 * </pre>
 */
public class QueryPrefetchLeaseBenchmark extends CpuPathBenchmark {
    @Param({"128", "1024", "8192", "32768"})
    int n;

    /** {@code reference} (salt ‖ index, as the reference bench) or {@code random} (production-like). */
    @Param({"reference"})
    String hashes;

    /** The RAM tier's policy ({@code pega.cache.admission}): {@code lru}, {@code tinylfu} or {@code caffeine}. */
    @Param({"lru"})
    String admission;

    private String reqId;
    private byte @Nullable [] lease; // set by the benchmark method, released after each invocation
    private long iteration;

    @Override
    CpuPathFixture createFixture() {
        return CpuPathFixture.create(n, 1, 1024, CpuPathFixture.Layout.SHARED, BenchBackend.HOST, admission)
                .hashes(CpuPathFixture.HashKind.of(hashes))
                .primed();
    }

    @Setup(Level.Invocation)
    public void nextInvocation() {
        iteration++;
        reqId = "query-" + iteration;
    }

    @Benchmark
    public byte[] query_prefetch_lease() {
        lease = fixture.queryAllHit(reqId);
        return lease;
    }

    @TearDown(Level.Invocation)
    public void afterInvocation() {
        // JMH runs an invocation's teardown after the benchmark method returned
        fixture.release(Objects.requireNonNull(lease, "the benchmark method ran"));
    }
}
