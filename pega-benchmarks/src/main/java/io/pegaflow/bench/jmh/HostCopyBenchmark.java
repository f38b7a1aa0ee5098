package io.pegaflow.bench.jmh;

import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.sys.Posix;
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
 * Host-backend copy throughput against a plain native memcpy of the same bytes, in the same run: N blocks of
 * {@code blockBytes} (default 8192 × 64 KiB = 512 MiB) between the same {@code /dev/shm} device object and memory of
 * the same pinned pool.
 *
 * <ul>
 *   <li>{@code native_memcpy_to_pool} / {@code native_memcpy_to_device}: one libc memcpy of all N blocks, the floor.
 *   <li>{@code engine_save_flush}: a whole engine Save of the N blocks (fresh hashes, index drained untimed) plus the
 *       seal flush, i.e. copy plus bookkeeping.
 *   <li>{@code engine_load_wait}: a whole engine Load of the N blocks (query and lease untimed) until the load
 *       state reads SUCCESS, polled every 1 ms as the reference's worker does (so up to 1 ms of the figure is the
 *       poll). Polling faster is worse here: on 2 vCPUs a waiter waking every 20 µs slowed the lane's memcpy by ~40%.
 * </ul>
 *
 * GB/s = N × blockBytes / time. Run:
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar HostCopyBenchmark -f 1 -wi 3 -i 5
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(
        value = 2,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class HostCopyBenchmark {

    @State(Scope.Benchmark)
    public static class Copy {
        @Param({"8192"})
        int n;

        @Param({"65536"})
        int blockBytes;

        CpuPathFixture fixture;
        long totalBytes;

        @Setup(Level.Trial)
        public void setUp() {
            fixture = CpuPathFixture.create(n, 1, blockBytes, CpuPathFixture.Layout.SHARED, BenchBackend.HOST);
            totalBytes = (long) n * blockBytes;
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            fixture.close();
        }
    }

    /** A pool allocation as large as the N blocks, for the native baseline. */
    @State(Scope.Benchmark)
    public static class Destination {
        PinnedAllocation allocation;

        @Setup(Level.Trial)
        public void setUp(Copy copy) {
            PinnedAllocation a = copy.fixture.engine().staging().allocate("native baseline", copy.totalBytes);
            if (a == null) {
                throw new IllegalStateException("pool has no room for " + copy.totalBytes + " bytes");
            }
            allocation = a;
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            allocation.release();
        }
    }

    /** Fresh hashes and an empty index before every Save. */
    @State(Scope.Thread)
    public static class Unique {
        long salt;

        @Setup(Level.Invocation)
        public void next(Copy copy) {
            copy.fixture.cleanup();
            copy.fixture.setSalt(++salt);
        }
    }

    /** N resident blocks (saved once) and a fresh lease on them before every Load. */
    @State(Scope.Thread)
    public static class Leased {
        byte[] lease;
        long iteration;

        @Setup(Level.Trial)
        public void prime(Copy copy) {
            copy.fixture.primed();
        }

        @Setup(Level.Invocation)
        public void next(Copy copy) {
            iteration++;
            lease = copy.fixture.queryAllHit("copy-" + iteration);
        }
    }

    @Benchmark
    public void native_memcpy_to_pool(Copy copy, Destination dst) {
        // OFF-HEAP: both ranges are live for totalBytes (the shm object and a pool allocation of that size).
        Posix.memcpy(dst.allocation.address(), copy.fixture.device().address(), copy.totalBytes);
    }

    @Benchmark
    public void native_memcpy_to_device(Copy copy, Destination dst) {
        // OFF-HEAP: as above, reversed.
        Posix.memcpy(copy.fixture.device().address(), dst.allocation.address(), copy.totalBytes);
    }

    @Benchmark
    public void engine_save_flush(Copy copy, Unique unique) {
        copy.fixture.save();
        copy.fixture.flush();
    }

    @Benchmark
    public void engine_load_wait(Copy copy, Leased leased) {
        copy.fixture.loadAndWait(leased.lease);
    }
}
