package io.pegaflow.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.cache.AdmissionPolicy;
import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.journal.RegistrationJournal;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A registration that fails after it was journaled (here: its device's copier cannot be opened, as a device lost or an
 * allocation failing would) leaves no record behind, so the next restart does not try to re-open a registration that
 * never was. The instance's other, installed registrations stay journaled. Before, the failed one stayed as a ghost.
 */
@Timeout(60)
class RegistrationWithdrawalTest {
    private static final int BLOCKS = 4;
    private static final int BLOCK_BYTES = 4096;

    @TempDir
    Path state;

    /** The host backend, whose copiers fail for the devices the test names. */
    private static final class FailingDevices extends HookedHostBackend {
        final Set<Integer> failing = ConcurrentHashMap.newKeySet();

        FailingDevices() {
            super(CopyHook.NONE);
        }

        @Override
        public DeviceCopier openCopier(int deviceId) {
            if (failing.contains(deviceId)) {
                throw EngineException.internal("device " + deviceId + " lost", null);
            }
            return super.openCopier(deviceId);
        }
    }

    @Test
    void shouldTakeAFailedRegistrationOutOfTheJournal() {
        FailingDevices backend = new FailingDevices();
        EngineConfig config = EngineConfig.defaults(PoolConfig.of(16L << 20));
        try (TestShm kept = TestShm.create("pega_withdraw_", (long) BLOCKS * BLOCK_BYTES);
                TestShm second = TestShm.create("pega_withdraw_", (long) BLOCKS * BLOCK_BYTES);
                TestShm ghost = TestShm.create("pega_withdraw_", (long) BLOCKS * BLOCK_BYTES)) {
            try (RegistrationJournal journal = RegistrationJournal.open(state);
                    PegaEngine engine = PegaEngine.launch(new EngineContext()
                            .config(config)
                            .pool(PinnedMemoryPool.create(config.pool()))
                            .backend(backend)
                            .admission(AdmissionPolicy.ALWAYS)
                            .registrationLog(journal))) {
                engine.registerContextBatch(command("mixed", 0, kept));
                backend.failing.add(1);
                // the instance's second device fails after its record was made durable: the compaction path
                assertThatThrownBy(() -> engine.registerContextBatch(command("mixed", 1, second)))
                        .isInstanceOf(EngineException.class)
                        .hasMessageContaining("device 1 lost");
                // an instance whose only registration fails: the REMOVE path
                assertThatThrownBy(() -> engine.registerContextBatch(command("ghost", 1, ghost)))
                        .isInstanceOf(EngineException.class);
                assertThat(journal.instanceIds()).containsExactly("mixed");
                assertThat(backend.host.mappedObjects())
                        .as("only the installed layer is mapped")
                        .isEqualTo(1);
            }
            try (RegistrationJournal reopened = RegistrationJournal.open(state)) {
                List<RegisterCommand> recovered = reopened.recovery().registrations();
                assertThat(recovered).hasSize(1);
                assertThat(recovered.get(0).instanceId()).isEqualTo("mixed");
                assertThat(recovered.get(0).deviceId()).isZero();
            }
        }
    }

    private static RegisterCommand command(String instance, int deviceId, TestShm memory) {
        return RegisterCommand.inProcess(
                instance,
                "withdraw-ns",
                0,
                1,
                1,
                deviceId,
                1,
                0,
                List.of("layer_0"),
                List.of(memory.descriptor(0, (long) BLOCKS * BLOCK_BYTES)),
                new long[] {BLOCKS},
                new long[] {BLOCK_BYTES},
                new long[] {0},
                new long[] {1},
                OptionalInt.of(ProcessUid.current()));
    }
}
