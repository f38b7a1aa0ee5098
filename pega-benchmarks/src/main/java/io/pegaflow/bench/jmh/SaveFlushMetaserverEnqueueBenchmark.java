package io.pegaflow.bench.jmh;

import io.pegaflow.core.engine.BlockIndexListener;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;

/**
 * {@code cpu_path/save_flush_unique_metaserver_enqueue/N}: {@link SaveFlushUniqueBenchmark} with a block-index
 * listener installed, measuring what announcing sealed blocks costs the save path.
 *
 * <p>The reference points its MetaServer client at an unreachable address and measures only the enqueue. The equivalent
 * here is a listener that does what the client's {@code onSealed} must do: offer the batch to a bounded queue of 256,
 * dropping and counting when full; a daemon drains the queue as a sender that fails at once would. The real client
 * lives in another module and is not a dependency of the core.
 *
 * <pre>
 * java -jar pega-benchmarks/target/benchmarks.jar SaveFlushMetaserverEnqueueBenchmark -f 1 -wi 3 -i 5
 * </pre>
 */
public class SaveFlushMetaserverEnqueueBenchmark extends SaveBenchmark {
    @Param({"128", "1024", "8192", "32768"})
    int n;

    @Param({"host"})
    String backend;

    private @Nullable EnqueueListener listener; // made with the fixture, in the trial's setUp

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

    @Override
    CpuPathFixture createFixture() {
        listener = new EnqueueListener();
        return CpuPathFixture.create(
                n, 1, 1024, CpuPathFixture.Layout.SHARED, BenchBackend.of(backend), List.of(listener));
    }

    @Benchmark
    public void save_flush_unique_metaserver_enqueue() {
        fixture.save();
        fixture.flush();
    }

    /** Still the inherited trial teardown (not re-annotated, see {@link SaveInsertFlushCpuMultilayerBenchmark}). */
    @Override
    public void tearDown() {
        super.tearDown();
        Objects.requireNonNull(listener, "setUp made the listener").stop();
    }
}
