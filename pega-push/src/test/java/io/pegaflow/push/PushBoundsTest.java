package io.pegaflow.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.Principal;
import io.pegaflow.push.layout.PushLayerSpec;
import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.PushClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What one client may hold: a principal's share of the request slots (another tenant can still prepare when one has
 * taken its share), timeouts bounded by the server's setting whatever the client sends (2^64-1 included), and tp_size
 * bounded as in RegisterContext.
 */
@Timeout(60)
class PushBoundsTest {
    private static final Principal OWNER = Principal.inProcess();
    private static final Principal TENANT = Principal.uid(1_000_002);
    /** The uid the objects are created by (this process's): the owner check of shm names passes. */
    private static final OptionalInt ME = OptionalInt.of(ProcessUid.current());

    private static final Duration RPC = Duration.ofSeconds(10);
    /** Four slots, two per principal; receives time out after a second. */
    private static final PushConfig CONFIG = new PushConfig(
            Duration.ofSeconds(1),
            Duration.ofSeconds(1),
            Duration.ofSeconds(10),
            Duration.ofSeconds(5),
            Duration.ZERO,
            64,
            4,
            4L << 20,
            2);

    private PushNode node;
    private MockVllmWorker owned;
    private MockVllmWorker tenants;
    private PushClient client;
    private final List<LoadStateShm> states = new ArrayList<>();

    @BeforeEach
    void start() {
        node = PushNode.start("tcp", CONFIG);
        owned = PushFixture.worker("owner-dc", 0, 1, node.port());
        tenants = PushFixture.worker("tenant-dc", 0, 1, node.port());
        client = PushClient.connect("127.0.0.1", node.port(), RPC);
        client.registerLayers(owned);
        List<PushLayerSpec> layers = new ArrayList<>();
        tenants.layers()
                .forEach(r -> layers.add(new PushLayerSpec(
                        r.name(),
                        r.descriptor(),
                        r.layout().numBlocks(),
                        r.layout().bytesPerBlock(),
                        r.layout().kvStrideBytes(),
                        r.layout().segments())));
        node.engine.registerLayers(
                new Caller("tenant-dc", OptionalInt.of(ProcessUid.current())), TENANT, "tenant-dc", 0, 1, 0, layers);
    }

    @AfterEach
    void stop() {
        PushContract.closeAll(client, owned, tenants, node);
        states.forEach(LoadStateShm::close);
        assertThat(node.pool.outstandingAllocations()).isZero();
    }

    private String state() {
        LoadStateShm s = LoadStateShm.create();
        states.add(s);
        return s.name();
    }

    @Test
    void shouldLeaveOtherTenantsTheirShareWhenOneHoldsItsOwn() {
        node.engine.prepareReceive(TENANT, ME, "tenant-dc", "t0", List.of(1L), List.of(state()), 600_000);
        assertThat(node.engine.slotSaturation()).as("a share not used up").isNull();
        node.engine.prepareReceive(TENANT, ME, "tenant-dc", "t1", List.of(1L), List.of(state()), 600_000);
        // health says which share is used up, without naming whose
        assertThat(node.engine.slotSaturation())
                .contains("1 principal holds its whole share")
                .contains("pega.pd.max-requests-per-principal")
                .doesNotContain(TENANT.name());
        assertThatThrownBy(() -> node.engine.prepareReceive(
                        TENANT, ME, "tenant-dc", "t2", List.of(1L), List.of(state()), 600_000))
                .isInstanceOfSatisfying(EngineException.class, e -> {
                    assertThat(e.kind()).isEqualTo(EngineException.Kind.RESOURCE_EXHAUSTED);
                    assertThat(e.getMessage()).contains("pega.pd.max-requests-per-principal is 2");
                });
        node.engine.prepareReceive(OWNER, ME, "owner-dc", "o0", List.of(1L), List.of(state()), 600_000);
        node.engine.prepareReceive(OWNER, ME, "owner-dc", "o1", List.of(1L), List.of(state()), 600_000);
        assertThatThrownBy(() ->
                        node.engine.prepareReceive(OWNER, ME, "owner-dc", "o2", List.of(1L), List.of(state()), 600_000))
                .isInstanceOfSatisfying(
                        EngineException.class, e -> assertThat(e.getMessage()).contains("pega.pd.max-requests"));
        assertThat(node.engine.slotSaturation()).contains("every push request slot is held");
    }

    @Test
    void shouldBoundEveryTimeoutByTheServersSetting() {
        String name = state();
        LoadStateShm s = states.get(0);
        // 2^64 - 1 ms on the wire: the receive still ends at pega.pd.receive-timeout, and its slot comes back
        node.engine.prepareReceive(OWNER, ME, "owner-dc", "forever", List.of(1L), List.of(name), -1L);
        assertThat(s.awaitTerminal(Duration.ofSeconds(20))).isEqualTo(LoadStateShm.FAILURE);
        for (int i = 0; i < 2; i++) {
            node.engine.prepareReceive(OWNER, ME, "owner-dc", "again" + i, List.of(1L), List.of(state()), 0);
        }
    }

    @Test
    void shouldRefuseATpSizeBeyondRegisterContextsBound() {
        assertThatThrownBy(() -> node.engine.registerLayers(
                        new Caller("wide", OptionalInt.of(ProcessUid.current())),
                        OWNER,
                        "wide",
                        0,
                        1 << 20,
                        0,
                        List.of(new PushLayerSpec("l", new byte[0], 0, 0, 0, 0))))
                .isInstanceOfSatisfying(EngineException.class, e -> {
                    assertThat(e.kind()).isEqualTo(EngineException.Kind.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).isEqualTo("tp_size 1048576 exceeds the supported maximum of 1024");
                });
    }
}
