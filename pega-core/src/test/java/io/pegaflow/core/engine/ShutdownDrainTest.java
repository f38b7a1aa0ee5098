package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.engine.EngineHarness.Worker;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Decision 0011, graceful drain: a shutdown that comes right after Loads were accepted lets them finish and signals
 * every one of their load states before the engine lets go of the pool and the mappings. No worker is left polling a
 * state that never turns terminal, and what it was told succeeded really is in its memory.
 */
@Timeout(60)
class ShutdownDrainTest {
    private static final int BLOCK = (int) (64 * KIB);
    private static final int LOADS = 8;

    @Test
    void shouldSignalEveryAcceptedLoadBeforeTheEngineCloses() {
        EngineHarness harness = new EngineHarness(4 * MIB);
        Worker w = harness.worker("drained", 4, BLOCK);
        List<TestShm> states = new ArrayList<>();
        try {
            w.register();
            long[] content = {21, 22, 23, 24};
            w.fill(ids(0, 4), content);
            w.save(ids(0, 4), hashes(3, 4));
            harness.engine.flushSeals();
            w.zero();
            for (int i = 0; i < LOADS; i++) {
                QueryOutcome ready = w.query(hashes(3, 4), "req-" + i);
                assertThat(ready.hitBlocks()).isEqualTo(4);
                TestShm state = TestShm.loadState();
                states.add(state);
                harness.engine.load(
                        "drained",
                        0,
                        0,
                        state.name(),
                        List.of(EngineHarness.LAYER),
                        List.of(new LeaseLoad(ready.lease(), ids(0, 4))));
            }

            harness.engine.close(); // at once: the Loads are queued or running on the load lane

            for (int i = 0; i < LOADS; i++) {
                assertThat(states.get(i).state()).as("load %d signalled", i).isEqualTo(1);
            }
            w.verify(ids(0, 4), content);
        } finally {
            states.forEach(TestShm::close);
            w.memory.close();
        }
    }
}
