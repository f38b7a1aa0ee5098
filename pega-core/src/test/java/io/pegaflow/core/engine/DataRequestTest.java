package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.engine.EngineHarness.LoadOutcome;
import io.pegaflow.core.engine.EngineHarness.Worker;
import io.pegaflow.core.error.EngineException;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Save and Load resolve their target in one place ({@link DataRequest}): the same rank check guards both, so a Load
 * with a negative tp rank is refused with a clear error instead of indexing a slot that does not exist.
 */
@Timeout(60)
class DataRequestTest {
    private static final int BLOCKS = 4;
    private static final int BLOCK_BYTES = (int) (4 * KIB);
    private static final long[] CONTENT = {21, 22, 23, 24};

    private final EngineHarness harness = new EngineHarness(16 * MIB);
    private final PegaEngine engine = harness.engine;

    @AfterEach
    void tearDown() {
        harness.close();
    }

    private byte[] leaseOfSaved(Worker w, int salt, String req) {
        QueryOutcome hit = w.query(hashes(salt, BLOCKS), req);
        assertThat(hit.hitBlocks()).isEqualTo(BLOCKS);
        return hit.lease();
    }

    @Test
    void shouldRefuseALoadRankOutsideTheInstanceOnEitherSide() {
        Worker w = harness.worker("ranks", BLOCKS, BLOCK_BYTES);
        w.register();
        w.fill(ids(0, BLOCKS), CONTENT);
        w.save(ids(0, BLOCKS), hashes(5, BLOCKS));
        engine.flushSeals();

        for (long rank : new long[] {-1, 1, Long.MAX_VALUE}) {
            LoadOutcome refused = w.load(leaseOfSaved(w, 5, "r" + rank), ids(0, BLOCKS), rank);
            assertThat(refused.error()).as("tp_rank %d", rank).isNotNull();
            assertThat(refused.error().kind()).isEqualTo(EngineException.Kind.INVALID_ARGUMENT);
            assertThat(refused.error().getMessage()).endsWith("tp_rank " + rank + " out of range (tp_size 1)");
            assertThat(refused.state()).as("the worker is told the load failed").isEqualTo(-1);
        }
        assertThat(engine.activeLeases())
                .as("refused loads gave their leases back")
                .isZero();

        w.zero();
        assertThat(w.load(leaseOfSaved(w, 5, "ok"), ids(0, BLOCKS)).succeeded()).isTrue();
        w.verify(ids(0, BLOCKS), CONTENT);
    }

    @Test
    void shouldResolveSaveAndLoadLayersWithTheirOwnWording() {
        Worker w = harness.worker("layers", BLOCKS, BLOCK_BYTES);
        w.register();
        assertThatThrownBy(() -> engine.save(
                        "layers", 0, 0, w.deviceId, List.of(new LayerSave("nope", ids(0, 1), hashes(6, 1)))))
                .isInstanceOfSatisfying(EngineException.class, e -> {
                    assertThat(e.kind()).isEqualTo(EngineException.Kind.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).endsWith("layer nope unknown");
                });
        assertThatThrownBy(() -> engine.save("layers", 0, 0, -1, List.of()))
                .isInstanceOfSatisfying(
                        EngineException.class, e -> assertThat(e.getMessage()).endsWith("device_id -1 must be >= 0"));
        assertThatThrownBy(() -> engine.save("layers", 0, 0, w.deviceId + 7, List.of()))
                .isInstanceOfSatisfying(
                        EngineException.class,
                        e -> assertThat(e.kind()).isEqualTo(EngineException.Kind.FAILED_PRECONDITION));
    }
}
