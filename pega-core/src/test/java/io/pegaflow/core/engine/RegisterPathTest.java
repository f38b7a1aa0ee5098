package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.engine.EngineHarness.Worker;
import io.pegaflow.core.error.EngineException;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** RegisterContextBatch through the engine API: rejected requests change nothing. */
@Timeout(60)
class RegisterPathTest {
    private static final int BLOCKS = 4;
    private static final int BLOCK_BYTES = (int) (4 * KIB);

    private final EngineHarness harness = new EngineHarness(16 * MIB);
    private final PegaEngine engine = harness.engine;

    @AfterEach
    void tearDown() {
        harness.close();
    }

    /** A command for {@code w}'s memory under another layer name and topology. */
    private static RegisterCommand command(Worker w, String layer, long tpSize, long worldSize) {
        return RegisterCommand.inProcess(
                w.instanceId,
                w.namespace,
                0,
                tpSize,
                worldSize,
                w.deviceId,
                1,
                0,
                List.of(layer),
                List.of(w.memory.descriptor(0, (long) BLOCKS * BLOCK_BYTES)),
                new long[] {BLOCKS},
                new long[] {BLOCK_BYTES},
                new long[] {0},
                new long[] {1},
                OptionalInt.of(ProcessUid.current()));
    }

    @Test
    void shouldKeepSlotsUnchangedWhenADuplicateDeviceIsRejected() {
        Worker w = harness.worker("dup", BLOCKS, BLOCK_BYTES);
        w.register();

        assertThatThrownBy(() -> engine.registerContextBatch(command(w, "layer_extra", 1, 1)))
                .hasMessage("invalid argument: GPU context for device 0 already exists");
        w.fill(ids(0, BLOCKS), new long[] {1, 2, 3, 4});
        w.save(ids(0, BLOCKS), hashes(1, BLOCKS));
        engine.flushSeals();

        QueryOutcome hit = w.query(hashes(1, BLOCKS), "after-reject");
        assertThat(hit.hitBlocks())
                .as("blocks still seal with the instance's one layer")
                .isEqualTo(BLOCKS);
        engine.release(hit.lease());
        assertThat(harness.backend.mappedObjects())
                .as("the rejected request's mapping was closed")
                .isEqualTo(1);
    }

    @Test
    void shouldCloseMappingsOfTopologyMismatch() {
        Worker w = harness.worker("topo", BLOCKS, BLOCK_BYTES);
        w.register();
        Worker other = harness.worker("topo", "core-ns", 1, 1, BLOCKS, BLOCK_BYTES);

        assertThatThrownBy(() -> engine.registerContextBatch(command(other, EngineHarness.LAYER, 2, 1)))
                .isInstanceOfSatisfying(EngineException.class, e -> {
                    assertThat(e.kind()).isEqualTo(EngineException.Kind.FAILED_PRECONDITION);
                    assertThat(e.getMessage())
                            .isEqualTo("topology mismatch: instance topo exists with tp=1, world=1; requested tp=2,"
                                    + " world=1");
                });
        assertThat(harness.backend.mappedObjects()).isEqualTo(1);
    }

    @Test
    void shouldCreateNoInstanceWhenLayoutIsInvalid() {
        Worker w = harness.worker("bad-layout", BLOCKS, BLOCK_BYTES);
        RegisterCommand tooBig = RegisterCommand.inProcess(
                w.instanceId,
                w.namespace,
                0,
                1,
                1,
                0,
                1,
                0,
                List.of("layer_0"),
                List.of(w.memory.descriptor(0, (long) BLOCKS * BLOCK_BYTES)),
                new long[] {BLOCKS + 1},
                new long[] {BLOCK_BYTES},
                new long[] {0},
                new long[] {1},
                OptionalInt.of(ProcessUid.current()));

        assertThatThrownBy(() -> engine.registerContextBatch(tooBig))
                .hasMessage("invalid argument: layer layer_0: registered memory too small: need 20480 bytes, got"
                        + " 16384");
        assertThat(engine.instanceIds()).isEmpty();
        assertThat(harness.backend.mappedObjects()).isZero();
    }

    @Test
    void shouldCountClosedMappingsAsRemovedTensors() {
        Worker a = harness.worker("count-a", BLOCKS, BLOCK_BYTES);
        Worker b = harness.worker("count-b", BLOCKS, BLOCK_BYTES);
        a.register();
        b.register();

        CleanupResult one = engine.cleanupInstances("count-a");
        CleanupResult missing = engine.cleanupInstances("count-a");
        CleanupResult all = engine.cleanupInstances(null);

        assertThat(one.removedInstances()).containsExactly("count-a");
        assertThat(one.removedTensors()).isEqualTo(1);
        assertThat(missing).as("unknown id: the endpoint answers 404").isNull();
        assertThat(all.removedInstances()).containsExactly("count-b");
        assertThat(harness.backend.mappedObjects()).isZero();
    }
}
