package io.pegaflow.push;

import static io.pegaflow.push.PushFixture.LAYERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.ext.push.LayerTarget;
import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.proto.ext.push.PushHandshake;
import io.pegaflow.proto.ext.push.RankTarget;
import io.pegaflow.push.grpc.PushWire;
import io.pegaflow.push.layout.HandshakeSeal;
import io.pegaflow.testkit.LayerReadyShm;
import io.pegaflow.testkit.LoadStateShm;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * With a cluster credential ({@code pega.cluster.token}) the decode server seals every handshake and the prefill
 * server refuses one a client changed on its way: staging addresses rewritten to another part of the decode server's
 * pool (the probe's PD-06) or to a wild address (PD-09), garbage UCX worker addresses in the descriptor (PD-07, which
 * aborted the process inside UCX) and a handshake of a decode server with another credential. Every refusal is
 * INVALID_ARGUMENT before a connection or a put, the server stays up, and the contract (inherited) holds with seals.
 */
class PushSealTest extends PushContract {
    private static final String TOKEN = "a-cluster-credential-of-32-chars";

    @Override
    String transports() {
        return "tcp";
    }

    @Override
    PushNode startNode() {
        return PushNode.start(transports(), config(), HandshakeSeal.of(TOKEN));
    }

    private void assertRefusedAfter(UnaryOperator<PushHandshake> tamper) throws Exception {
        try (LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            List<Long> blocks = PushFixture.blocks(1, 2);
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", "sealed-d", blocks, List.of(loadState.name()), RPC);
            PushHandshake genuine = PushHandshake.parseFrom(prepared.getHandshake());
            assertThat(genuine.getSeal().size()).isEqualTo(32);
            ByteString forged = tamper.apply(genuine).toByteString();
            assertThatThrownBy(() ->
                            prefillClient.startPush("prefill-0", 0, "sealed-p", forged, blocks, ready, pushState, RPC))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription())
                                .contains("handshake: not sealed by a decode server of this cluster");
                    });
            assertThat(prefillClient.serverAlive(RPC)).isTrue();
            assertThat(prefillNode.engine.view().pushesInFlight()).isZero();
            decodeClient.cancelReceive(prepared.getReceiveId());
        }
    }

    private static PushHandshake retarget(PushHandshake h, long address) {
        PushHandshake.Builder b = h.toBuilder();
        RankTarget.Builder r = b.getRanks(0).toBuilder();
        for (int l = 0; l < r.getLayersCount(); l++) {
            r.setLayers(l, LayerTarget.newBuilder(r.getLayers(l)).setBaseAddress(address + l * (32L << 20)));
        }
        return b.setRanks(0, r).build();
    }

    @Test
    void shouldRefuseRewrittenStagingAddresses() throws Exception {
        assertRefusedAfter(h -> retarget(h, h.getRanks(0).getLayers(0).getBaseAddress() - (16L << 20)));
        assertRefusedAfter(h -> retarget(h, 0x10000));
    }

    @Test
    void shouldRefuseAGarbageDescriptorBeforeUcxSeesIt() throws Exception {
        assertRefusedAfter(h -> {
            byte[] d = h.getTransferDescriptor().toByteArray();
            for (int i = d.length / 2; i < d.length; i++) {
                d[i] ^= (byte) 0x5a;
            }
            return h.toBuilder().setTransferDescriptor(ByteString.copyFrom(d)).build();
        });
    }

    @Test
    void shouldRefuseAnUnsealedOrForeignSealedHandshake() throws Exception {
        assertRefusedAfter(h -> h.toBuilder().clearSeal().build());
        assertRefusedAfter(h -> PushWire.toWire(HandshakeSeal.of("another-cluster-credential-value")
                .seal(PushWire.fromWire(h.toBuilder().clearSeal().build()), new PushWire())));
    }
}
