package io.pegaflow.bench.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * {@code cpu_path/load_submit_wait/N}: the query and lease run untimed; timed are creating the worker's load-state
 * object in {@code /dev/shm}, the Load call, and polling the state every 1 ms until it reads SUCCESS, exactly as the
 * reference does. The 1 ms poll puts a floor of about one poll interval under small N; {@code load_submit_poll}
 * polls with a 20 µs to 1 ms backoff instead, to show what is under that floor.
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar LoadSubmitWaitBenchmark -f 1 -wi 3 -i 5
 * </pre>
 */
public class LoadSubmitWaitBenchmark extends CpuPathBenchmark {
    @Param({"128", "1024", "8192", "32768"})
    int n;

    @Param({"host", "nocopy"})
    String backend;

    private byte[] lease;
    private long iteration;

    @Override
    CpuPathFixture createFixture() {
        return CpuPathFixture.create(n, 1, 1024, CpuPathFixture.Layout.SHARED, BenchBackend.of(backend))
                .primed();
    }

    @Setup(Level.Invocation)
    public void nextInvocation() {
        iteration++;
        lease = fixture.queryAllHit("load-" + iteration);
    }

    @Benchmark
    public void load_submit_wait() {
        fixture.loadAndWait(lease);
    }

    @Benchmark
    public void load_submit_poll() {
        fixture.loadAndPoll(lease);
    }
}
