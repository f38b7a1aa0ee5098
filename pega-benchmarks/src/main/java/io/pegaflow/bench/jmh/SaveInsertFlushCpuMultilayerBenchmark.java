package io.pegaflow.bench.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;

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
public class SaveInsertFlushCpuMultilayerBenchmark extends SaveBenchmark {
    @Param({"1024", "8192", "32768"})
    int n;

    @Param({"host"})
    String backend;

    @Override
    CpuPathFixture createFixture() {
        return CpuPathFixture.create(n, 61, 1, CpuPathFixture.Layout.SHARED, BenchBackend.of(backend));
    }

    /**
     * Runs as the inherited {@code @Setup(Level.Invocation)}: the Save must follow the new salt, and JMH documents no
     * order between two setup methods of one level. Not re-annotated, or JMH would call it twice.
     */
    @Override
    public void nextInvocation() {
        super.nextInvocation();
        fixture.save();
    }

    @Benchmark
    public void save_insert_flush_cpu_multilayer_61() {
        fixture.flush();
    }
}
