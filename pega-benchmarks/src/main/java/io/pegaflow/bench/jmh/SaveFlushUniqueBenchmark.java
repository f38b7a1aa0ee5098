package io.pegaflow.bench.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;

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
public class SaveFlushUniqueBenchmark extends SaveBenchmark {
    @Param({"128", "1024", "8192", "32768"})
    int n;

    @Param({"host", "nocopy"})
    String backend;

    /** {@code reference} (salt ‖ index, as the reference bench) or {@code random} (production-like). */
    @Param({"reference"})
    String hashes;

    /** The RAM tier's policy ({@code pega.cache.admission}): {@code lru}, {@code tinylfu} or {@code caffeine}. */
    @Param({"lru"})
    String admission;

    @Override
    CpuPathFixture createFixture() {
        return CpuPathFixture.create(n, 1, 1024, CpuPathFixture.Layout.SHARED, BenchBackend.of(backend), admission)
                .hashes(CpuPathFixture.HashKind.of(hashes));
    }

    @Benchmark
    public void save_flush_unique() {
        fixture.save();
        fixture.flush();
    }
}
