package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.engine.EngineHarness.Worker;
import io.pegaflow.core.metrics.EngineCounter;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Blocks still missing slots are invisible, hold their memory, and are dropped by age. */
@Timeout(60)
class InflightGcTest {
    private static final int BLOCKS = 4;
    private static final int BLOCK_BYTES = (int) (4 * KIB);

    private final EngineHarness harness = new EngineHarness(16 * MIB);
    private final PegaEngine engine = harness.engine;

    @AfterEach
    void tearDown() {
        harness.close();
    }

    /** Registers {@code w}'s one layer into an instance that expects two layers per block. */
    private void registerHalfOfTwoLayers(Worker w) {
        engine.registerContextBatch(RegisterCommand.inProcess(
                w.instanceId,
                w.namespace,
                0,
                1,
                1,
                w.deviceId,
                2,
                0,
                List.of(EngineHarness.LAYER),
                List.of(w.memory.descriptor(0, (long) BLOCKS * BLOCK_BYTES)),
                new long[] {BLOCKS},
                new long[] {BLOCK_BYTES},
                new long[] {0},
                new long[] {1},
                OptionalInt.of(ProcessUid.current())));
    }

    @Test
    void shouldDropIncompleteBlocksOnceOlderThanTheMaximumAge() {
        Worker w = harness.worker("half", BLOCKS, BLOCK_BYTES);
        registerHalfOfTwoLayers(w);
        w.fill(ids(0, BLOCKS), new long[] {1, 2, 3, 4});
        w.save(ids(0, BLOCKS), hashes(1, BLOCKS));
        engine.flushSeals();

        assertThat(w.query(hashes(1, BLOCKS), "partial").hitBlocks()).isZero();
        assertThat(engine.metrics().inflightBytes()).isEqualTo((long) BLOCKS * BLOCK_BYTES);
        engine.cleanupMemory();
        assertThat(engine.pool().outstandingAllocations())
                .as("held by the in-flight entries")
                .isPositive();

        harness.advance(Duration.ofSeconds(299));
        engine.runMaintenance();
        assertThat(engine.metrics().inflightBytes()).as("not old enough yet").isPositive();

        harness.advance(Duration.ofSeconds(2));
        engine.runMaintenance();

        assertThat(engine.metrics().count(EngineCounter.INFLIGHT_GC_CLEANED)).isEqualTo(BLOCKS);
        assertThat(engine.metrics().inflightBytes()).isZero();
        assertThat(engine.pool().outstandingAllocations()).isZero();
    }
}
