package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.InstanceLimits;
import io.pegaflow.core.instance.Principal;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Names a registration keeps (instance id, namespace, layer names) are bounded where they enter, before anything is
 * mapped, journaled or logged: a 60 MiB namespace once filled the heap and a journal no restart could read.
 */
@Timeout(30)
class NameBoundsTest {
    private static final String LONGEST = "n".repeat(InstanceLimits.MAX_NAME_CHARS);
    private static final String TOO_LONG = LONGEST + "n";

    private EngineHarness harness;
    private PegaEngine engine;

    @BeforeEach
    void start() {
        harness = new EngineHarness(MIB);
        engine = harness.engine;
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    private static RegisterCommand register(String instanceId, String namespace, String layer) {
        return RegisterCommand.inProcess(
                instanceId,
                namespace,
                0,
                1,
                1,
                0,
                1,
                0,
                List.of(layer),
                List.of(new byte[] {1}),
                new long[] {4},
                new long[] {1024},
                new long[] {0},
                new long[] {1},
                OptionalInt.of(ProcessUid.current()));
    }

    private static void assertRefused(Runnable call, String field) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(EngineException.class, e -> {
            assertThat(e.kind()).isEqualTo(EngineException.Kind.INVALID_ARGUMENT);
            assertThat(e.getMessage())
                    .isEqualTo(field + " is 1025 characters long, more than the supported maximum of 1024");
        });
    }

    @Test
    void shouldRefuseOverlongNamesInRegistrationsAndSessionsBeforeAnythingIsMapped() {
        assertRefused(() -> engine.registerContextBatch(register(TOO_LONG, "ns", "l0")), "instance_id");
        assertRefused(() -> engine.registerContextBatch(register("i", TOO_LONG, "l0")), "namespace");
        assertRefused(() -> engine.registerContextBatch(register("i", "ns", TOO_LONG)), "layer name");
        assertRefused(() -> engine.openSession(TOO_LONG, "ns", 1, 1, Principal.inProcess()), "instance_id");
        assertRefused(() -> engine.openSession("i", TOO_LONG, 1, 1, Principal.inProcess()), "namespace");
        assertThat(engine.instanceIds()).isEmpty();
        assertThat(engine.mappedObjectCount()).isZero();

        long token = engine.openSession(LONGEST, LONGEST, 1, 1, Principal.inProcess());
        engine.closeSession(LONGEST, token);
    }
}
