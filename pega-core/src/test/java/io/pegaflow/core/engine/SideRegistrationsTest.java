package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.Principal;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.agent.AgentGroup;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Layers registered beside the cache (the P/D push) obey the engine's rules: one owner per instance id across the
 * engine's registrations, Sessions and the side registrations; one mapping budget; and the engine's instance lifecycle
 * (Unregister, Session close, cleanup) ends them.
 */
@Timeout(60)
class SideRegistrationsTest {
    private static final Principal STRANGER = Principal.uid(1_000_001);
    /** Room for the worker's one layer and 3 side mappings. */
    private static final EngineLimits LIMITS = new EngineLimits(0.5, 256, 4, 512, 1024, 16384, 1024);

    private EngineHarness harness;
    private PegaEngine engine;
    private SideRegistrations side;
    private final List<String> ended = new CopyOnWriteArrayList<>();
    private AutoCloseable listening;

    @BeforeEach
    void start() {
        harness = new EngineHarness(EngineConfig.defaults(PoolConfig.of(MIB)), List.of(), new AgentGroup(), LIMITS);
        engine = harness.engine;
        side = engine.sideRegistrations();
        listening = side.onInstanceEnded(ended::add);
    }

    @AfterEach
    void tearDown() throws Exception {
        listening.close();
        harness.close();
    }

    @Test
    void shouldRefuseAnotherPrincipalOnAnIdTheEngineHolds() {
        harness.worker("engine-owned", 4, (int) (4 * KIB)).register();

        assertThatThrownBy(() -> side.admit("engine-owned", STRANGER, 1))
                .isInstanceOfSatisfying(EngineException.class, e -> {
                    assertThat(e.kind()).isEqualTo(EngineException.Kind.PERMISSION_DENIED);
                    assertThat(e.getMessage()).startsWith("instance engine-owned is registered by another user");
                });
        side.admit("engine-owned", Principal.inProcess(), 1).close();
    }

    @Test
    void shouldRefuseTheEngineToAnotherPrincipalWhileSideRegistrationsHoldTheId() {
        SideRegistrations.Ticket ticket = side.admit("push-owned", STRANGER, 1);

        assertThatThrownBy(
                        () -> harness.worker("push-owned", 4, (int) (4 * KIB)).register())
                .isInstanceOfSatisfying(
                        EngineException.class,
                        e -> assertThat(e.kind()).isEqualTo(EngineException.Kind.PERMISSION_DENIED));
        assertThatThrownBy(() -> engine.openSession("push-owned", "ns", 1, 1, Principal.inProcess()))
                .isInstanceOfSatisfying(
                        EngineException.class,
                        e -> assertThat(e.kind()).isEqualTo(EngineException.Kind.PERMISSION_DENIED));
        assertThatThrownBy(() -> side.admit("push-owned", Principal.inProcess(), 1))
                .isInstanceOfSatisfying(
                        EngineException.class,
                        e -> assertThat(e.kind()).isEqualTo(EngineException.Kind.PERMISSION_DENIED));

        ticket.close();
        ticket.close(); // once only: a second close gives nothing back twice
        harness.worker("push-owned", 4, (int) (4 * KIB)).register();
    }

    @Test
    void shouldShareTheMappingBudgetWithTheEngine() {
        harness.worker("w", 4, (int) (4 * KIB)).register(); // 1 of 4 mappings
        SideRegistrations.Ticket three = side.admit("w", Principal.inProcess(), 3);

        assertThatThrownBy(() -> side.admit("other", Principal.inProcess(), 1))
                .isInstanceOfSatisfying(EngineException.class, e -> {
                    assertThat(e.kind()).isEqualTo(EngineException.Kind.RESOURCE_EXHAUSTED);
                    assertThat(e.getMessage()).contains("pega.limits.mapped-objects is 4");
                });
        assertThat(engine.sideRegistrations()).isSameAs(side);

        three.close();
        side.admit("other", Principal.inProcess(), 3).close();
    }

    @Test
    void shouldEndSideRegistrationsWithTheEnginesInstance() {
        EngineHarness.Worker w = harness.worker("both", 4, (int) (4 * KIB));
        w.register();
        SideRegistrations.Ticket ticket = side.admit("both", Principal.inProcess(), 1);

        engine.unregister("both", Principal.inProcess());
        assertThat(ended).containsExactly("both");
        ticket.close();

        long token = engine.openSession("session-held", "ns", 1, 1, Principal.inProcess());
        SideRegistrations.Ticket held = side.admit("session-held", Principal.inProcess(), 1);
        engine.closeSession("session-held", token);
        assertThat(ended).containsExactly("both", "session-held");
        held.close();
    }

    @Test
    void shouldEndIdsHeldOnlyBesideTheEngineOnCleanup() {
        SideRegistrations.Ticket ticket = side.admit("push-only", Principal.inProcess(), 1);

        CleanupResult one = engine.cleanupInstances("push-only");
        assertThat(one).isNotNull();
        assertThat(one.removedInstances()).containsExactly("push-only");
        assertThat(ended).containsExactly("push-only");

        engine.cleanupInstances(null);
        assertThat(ended).containsExactly("push-only", "push-only");
        ticket.close();
        assertThat(engine.cleanupInstances("push-only"))
                .as("nothing holds the id any more")
                .isNull();
    }
}
