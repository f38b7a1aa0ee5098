package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.plan.RangePlan;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A registration has both lanes of the new device prepare their copier (streams, descriptor buffers) for a request of
 * every block of every layer, on the lanes' own threads, before it returns; a preparation that fails leaves the
 * registration and the copies working.
 */
@Timeout(60)
class LanePreparationTest {
    private static final int LAYERS = 4;
    private static final int BLOCKS = 64;
    private static final int BLOCK_BYTES = 512;

    /** One preparation as the copier saw it. */
    private record Prepared(long ranges, long bytes, boolean toHost, String thread) {}

    private final List<Prepared> prepared = new CopyOnWriteArrayList<>();
    private volatile boolean failPreparation;
    private EngineHarness harness;

    private final HookedHostBackend.CopyHook hook = new HookedHostBackend.CopyHook() {
        @Override
        public void beforeCopy(RangePlan plan, boolean toHost) {}

        @Override
        public void prepared(long ranges, long bytes, boolean toHost) {
            prepared.add(
                    new Prepared(ranges, bytes, toHost, Thread.currentThread().getName()));
            if (failPreparation) {
                throw EngineException.storage("injected preparation failure");
            }
        }
    };

    @AfterEach
    void assertNothingLeaked() {
        if (harness != null) {
            harness.close();
        }
    }

    private EngineHarness.Worker register(String instanceId) {
        harness = new EngineHarness(EngineConfig.defaults(PoolConfig.of(8 * MIB)), hook);
        EngineHarness.Worker worker = harness.worker(instanceId, LAYERS, BLOCKS, BLOCK_BYTES);
        worker.register();
        return worker;
    }

    @Test
    void shouldPrepareBothLanesOnTheirThreadsBeforeTheRegistrationReturns() {
        register("prepared");

        long ranges = (long) LAYERS * BLOCKS; // contiguous layers: one range per block
        assertThat(prepared)
                .as("both lanes prepared by the time register returned")
                .extracting(p -> List.of(p.ranges(), p.bytes(), p.toHost(), p.thread()))
                .containsExactlyInAnyOrder(
                        List.of(ranges, ranges * BLOCK_BYTES, true, "pega-prepared-dev0-save"),
                        List.of(ranges, ranges * BLOCK_BYTES, false, "pega-prepared-dev0-load"));
        harness.engine.unregister("prepared");
    }

    @Test
    void shouldRegisterAndCopyByteForByteWhenThePreparationFails() {
        failPreparation = true;
        EngineHarness.Worker worker = register("unprepared");

        assertThat(prepared).hasSize(2);
        int[] ids = {0, 5, 6, 63};
        long[] content = {11, 12, 13, 14};
        worker.fill(ids, content);
        List<byte[]> h = hashes(7, ids.length);
        worker.save(ids, h);
        harness.engine.flushSeals();
        QueryOutcome hit = worker.query(h, "r");
        assertThat(hit.hitBlocks()).isEqualTo(ids.length);
        worker.zero();
        assertThat(worker.load(hit.lease(), ids).state()).isEqualTo(1);
        worker.verify(ids, content);
        harness.engine.unregister("unprepared");
    }
}
