package io.pegaflow.push;

import static io.pegaflow.push.PushFixture.LAYERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.device.host.HostDeviceBackend;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.Principal;
import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.push.layout.PushLayerSpec;
import io.pegaflow.testkit.LayerReadyShm;
import io.pegaflow.testkit.LoadStateShm;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/**
 * Push layer registrations are registrations of the cache engine (decision 0021): the engine's owner rule holds the
 * instance id for one principal across both, and when the engine ends an instance its push layers end with it, at once
 * when idle and after the last push or receive using them otherwise. UCX over TCP on loopback, two whole push servers.
 */
class PushRegistrationRulesTest extends PushContract {
    private static final Principal STRANGER = Principal.uid(1_000_001);

    @Override
    String transports() {
        return "tcp";
    }

    private int mapped(PushNode node) {
        return ((HostDeviceBackend) node.backend).mappedObjects();
    }

    @Test
    void shouldRefuseAnotherPrincipalOnAnInstanceIdWithPushLayers() {
        List<PushLayerSpec> none = List.of(new PushLayerSpec("x", new byte[0], 0, 0, 0, 0));
        Caller caller = new Caller("prefill-0", OptionalInt.of(ProcessUid.current()));

        assertThatThrownBy(() -> prefillNode.engine.registerLayers(caller, STRANGER, "prefill-0", 0, 1, 0, none))
                .isInstanceOfSatisfying(EngineException.class, e -> {
                    assertThat(e.kind()).isEqualTo(EngineException.Kind.PERMISSION_DENIED);
                    assertThat(e.getMessage()).startsWith("instance prefill-0 is registered by another user");
                });
        assertThatThrownBy(() -> prefillNode.cache.openSession("prefill-0", "ns", 1, 1, STRANGER))
                .isInstanceOfSatisfying(
                        EngineException.class,
                        e -> assertThat(e.kind()).isEqualTo(EngineException.Kind.PERMISSION_DENIED));
        assertThat(prefillNode.engine.view().registeredRanks()).isEqualTo(1);
    }

    @Test
    void shouldEndIdlePushLayersWhenTheEngineEndsTheInstance() {
        int before = mapped(prefillNode); // the layers share one shm object: one mapping
        assertThat(before).isPositive();

        assertThat(prefillNode.cache.cleanupInstances("prefill-0")).isNotNull();

        assertThat(prefillNode.engine.view().registeredRanks()).isZero();
        assertThat(mapped(prefillNode)).as("the layers were unmapped").isZero();
        try (LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            PrepareReceiveResponse prepared = decodeClient.prepareReceive(
                    "decode-0", "ended-d", PushFixture.blocks(1), List.of(loadState.name()), RPC);
            assertThatThrownBy(() -> prefillClient.startPush(
                            "prefill-0",
                            0,
                            "ended-p",
                            prepared.getHandshake(),
                            PushFixture.blocks(1),
                            ready,
                            pushState,
                            RPC))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION));
            decodeClient.cancelReceive(prepared.getReceiveId());
        }
        // the worker registers again and pushes as before
        assertThat(prefillClient.registerLayers(prefill)).isEqualTo(LAYERS);
        assertThat(mapped(prefillNode)).isEqualTo(before);
    }

    @Test
    void shouldKeepPushLayersInUseUntilTheirReceiveEnds() {
        List<Long> from = PushFixture.blocks(2, 3, 4);
        List<Long> to = PushFixture.blocks(7, 8, 9);
        try (LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            int before = mapped(decodeNode);
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", "inuse-d", to, List.of(loadState.name()), RPC);
            decodeNode.cache.cleanupInstances("decode-0");
            assertThat(decodeNode.engine.view().registeredRanks())
                    .as("no new receive can use them")
                    .isZero();
            assertThat(mapped(decodeNode))
                    .as("the open receive keeps them mapped")
                    .isEqualTo(before);

            for (int l = 0; l < LAYERS; l++) {
                PushFixture.writeLayer(prefill, l, from, 5);
            }
            ready.markReady(LAYERS);
            prefillClient.startPush("prefill-0", 0, "inuse-p", prepared.getHandshake(), from, ready, pushState, RPC);
            assertThat(loadState.awaitTerminal(Duration.ofSeconds(20))).isEqualTo(LoadStateShm.SUCCESS);
            for (int l = 0; l < LAYERS; l++) {
                PushFixture.assertLayerEqual(prefill, decode, l, from, to);
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> mapped(decodeNode) == 0);
        }
    }
}
