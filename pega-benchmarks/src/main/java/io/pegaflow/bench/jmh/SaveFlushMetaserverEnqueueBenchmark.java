package io.pegaflow.bench.jmh;

import io.pegaflow.core.engine.BlockIndexListener;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
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
 * {@code cpu_path/save_flush_unique_metaserver_enqueue/N}: {@link SaveFlushUniqueBenchmark} with a block-index
 * listener installed, measuring what announcing sealed blocks costs the save path.
 *
 * <p>The reference points its MetaServer client at an unreachable address and measures only the enqueue. The
 * equivalent here is a listener that does what the client's {@code onSealed} must do (spec/storage.md §2.6): offer the
 * batch to a bounded queue of 256, dropping and counting when full; a daemon drains the queue as a sender that fails
 * at once would. The real client lives in another module and is not a dependency of the core.
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar SaveFlushMetaserverEnqueueBenchmark -f 1 -wi 3 -i 5
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
public class SaveFlushMetaserverEnqueueBenchmark {
    @Param({"128", "1024", "8192", "32768"})
    int n;

    @Param({"host"})
    String backend;

    private CpuPathFixture fixture;
    private EnqueueListener listener;
    private long salt;

    /** Bounded enqueue, drop when full; a daemon discards what it takes. */
    static final class EnqueueListener implements BlockIndexListener {
        private record Announcement(String namespace, List<byte[]> hashes, boolean sealed) {}

        private final ArrayBlockingQueue<Announcement> queue = new ArrayBlockingQueue<>(256);
        private final LongAdder dropped = new LongAdder();
        private final Thread drain;

        EnqueueListener() {
            drain = new Thread(
                    () -> {
                        try {
                            for (; ; ) {
                                queue.take();
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "bench-metaserver-drain");
            drain.setDaemon(true);
            drain.start();
        }

        @Override
        public void onSealed(String namespace, List<byte[]> hashes) {
            if (!queue.offer(new Announcement(namespace, hashes, true))) {
                dropped.increment();
            }
        }

        @Override
        public void onEvicted(String namespace, List<byte[]> hashes) {
            if (!queue.offer(new Announcement(namespace, hashes, false))) {
                dropped.increment();
            }
        }

        void stop() {
            drain.interrupt();
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        fixture = CpuPathFixture.create(n, 1, 1024, CpuPathFixture.Layout.SHARED, BenchBackend.of(backend));
        listener = new EnqueueListener();
        fixture.engine().setIndexListener(listener);
    }

    @Setup(Level.Invocation)
    public void nextInvocation() {
        fixture.cleanup();
        fixture.setSalt(++salt);
    }

    @Benchmark
    public void save_flush_unique_metaserver_enqueue() {
        fixture.save();
        fixture.flush();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        fixture.engine().setIndexListener(null);
        listener.stop();
        fixture.close();
    }
}
