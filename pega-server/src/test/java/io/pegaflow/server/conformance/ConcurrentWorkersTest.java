package io.pegaflow.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.StatusRuntimeException;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LoadResult;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ShmDeviceMemory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Eight worker instances of one namespace, each with its own device memory, run the connector's cycle concurrently
 * against one server: query a prefix of a shared chain, load the hits, verify every loaded byte, save the rest. The
 * chains' working set is twice the pool, so eviction runs throughout.
 *
 * <p>A block's bytes are a function of its hash alone (chain c, position j → {@code perByte(c)} of block j), so any
 * instance can verify what any other saved. Expected: no corrupted load, no error except misses, nothing leaked.
 */
@Timeout(180)
class ConcurrentWorkersTest extends ConformanceSupport {
    private static final int WORKERS = 8;
    private static final int CYCLES_PER_WORKER = 500;
    private static final int CHAINS = 128;
    private static final int CHAIN_LENGTH = 8;
    private static final int BLOCK_BYTES = 32 * 1024; // 128 × 8 × 32 KiB = 32 MiB of distinct blocks, pool 16 MiB
    private static final String NAMESPACE = "concurrent";
    private static final Logger LOG = LoggerFactory.getLogger(ConcurrentWorkersTest.class);

    private final LongAdder cycles = new LongAdder();
    private final LongAdder loadedBlocks = new LongAdder();
    private final LongAdder savedBlocks = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder releases = new LongAdder();
    private final Queue<String> problems = new ConcurrentLinkedQueue<>();

    private static ByteString hash(int chain, int position) {
        return BlockPattern.hash32(chain, position);
    }

    private static byte[] content(int chain, int position) {
        return BlockPattern.perByte(chain).bytes(position, 0, BLOCK_BYTES);
    }

    @Test
    void shouldServeConcurrentWorkersWithoutCorruptionErrorsOrLeaks() throws Exception {
        List<MockVllmWorker> workers = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
        try {
            for (int i = 0; i < WORKERS; i++) {
                MockVllmWorker w = bareWorker("concurrent-" + i)
                        .namespace(NAMESPACE)
                        .deviceId(i % 2)
                        .layer("layer_0", KvLayout.contiguous(CHAIN_LENGTH, BLOCK_BYTES))
                        .loadTimeout(Duration.ofSeconds(30))
                        .build();
                workers.add(w);
                w.register();
            }
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < WORKERS; i++) {
                MockVllmWorker w = workers.get(i);
                long seed = 0x5EED_0000L + i;
                done.add(pool.submit(() -> {
                    start.await();
                    runCycles(w, new SplittableRandom(seed));
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(150, TimeUnit.SECONDS);
            }

            LOG.info(
                    "{} cycles: {} blocks loaded and verified, {} saved, {} misses, {} probes released, {} evictions",
                    cycles.sum(),
                    loadedBlocks.sum(),
                    savedBlocks.sum(),
                    misses.sum(),
                    releases.sum(),
                    engine.metrics().count(EngineCounter.CACHE_EVICTIONS));
            assertThat(problems).as("corrupted loads and unexpected errors").isEmpty();
            assertThat(cycles.sum()).isEqualTo((long) WORKERS * CYCLES_PER_WORKER);
            assertThat(loadedBlocks.sum()).as("loads verified").isGreaterThan(1_000);
            assertThat(savedBlocks.sum()).isPositive();
            assertThat(misses.sum())
                    .as("eviction and cold chains produce misses")
                    .isPositive();
            assertThat(engine.metrics().count(EngineCounter.CACHE_EVICTIONS))
                    .as("the pool was under pressure")
                    .isPositive();
            assertThat(engine.activeLeases())
                    .as("every lease was loaded or released")
                    .isZero();
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
            workers.forEach(MockVllmWorker::close);
        }
    }

    private void runCycles(MockVllmWorker w, SplittableRandom random) {
        ShmDeviceMemory memory = w.layers().get(0).memory();
        for (int cycle = 0; cycle < CYCLES_PER_WORKER; cycle++) {
            // Popular chains are queried more often (a rough Zipf), so both hits and evictions happen.
            int chain = (int) Math.min(CHAINS - 1, Math.abs(random.nextGaussian()) * CHAINS / 3);
            int length = 1 + random.nextInt(CHAIN_LENGTH);
            List<ByteString> hashes =
                    IntStream.range(0, length).mapToObj(j -> hash(chain, j)).toList();
            try {
                cycle(w, memory, random, chain, hashes);
            } catch (StatusRuntimeException e) {
                problems.add(w.instanceId() + " cycle " + cycle + ": " + e.getStatus());
            } catch (RuntimeException | AssertionError e) {
                problems.add(w.instanceId() + " cycle " + cycle + ": " + e);
            }
            cycles.increment();
        }
    }

    private void cycle(
            MockVllmWorker w, ShmDeviceMemory memory, SplittableRandom random, int chain, List<ByteString> hashes) {
        int length = hashes.size();
        QueryReady ready = scheduler.queryUntilReady(w.instanceId(), hashes, "req-" + random.nextLong(), WAIT);
        int hits = (int) ready.getNumHitBlocks();
        misses.add(length - hits);
        memory.zero();
        if (hits > 0 && random.nextInt(10) == 0) {
            // The scheduler sometimes drops a probe instead of loading it.
            scheduler.release(ready.getLease());
            releases.increment();
            hits = 0;
        } else if (hits > 0) {
            List<Integer> ids = IntStream.range(0, hits).boxed().toList();
            LoadResult load = w.load(ready.getLease(), ids);
            if (!load.succeeded()) {
                problems.add(w.instanceId() + " load of chain " + chain + " failed: " + load);
                return;
            }
            for (int j = 0; j < hits; j++) {
                byte[] actual = memory.readBytes((long) j * BLOCK_BYTES, BLOCK_BYTES);
                if (!Arrays.equals(actual, content(chain, j))) {
                    problems.add(w.instanceId() + " corrupted block: chain " + chain + " position " + j);
                }
            }
            loadedBlocks.add(hits);
        }
        if (hits < length) {
            for (int j = hits; j < length; j++) {
                memory.writeBytes((long) j * BLOCK_BYTES, content(chain, j));
            }
            List<Integer> ids = IntStream.range(hits, length).boxed().toList();
            w.save(ids, hashes.subList(hits, length));
            savedBlocks.add(length - hits);
        }
    }
}
