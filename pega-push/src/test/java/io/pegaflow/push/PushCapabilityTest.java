package io.pegaflow.push;

import static io.pegaflow.push.PushFixture.LAYERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.Principal;
import io.pegaflow.proto.ext.push.LayerArrivedRequest;
import io.pegaflow.proto.ext.push.PdPushGrpc;
import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.proto.ext.push.PushFailedRequest;
import io.pegaflow.proto.ext.push.PushHandshake;
import io.pegaflow.proto.ext.push.WatchReceiveRequest;
import io.pegaflow.testkit.LayerReadyShm;
import io.pegaflow.testkit.LoadStateShm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Who may drive a push (decision 0022): pushes and receives name an instance id, and only the principal that owns it
 * may start, prepare or cancel them; the server-to-server calls (LayerArrived, PushFailed, WatchReceive) must present
 * the secret that only the receive's handshake carries, so a receive id learned elsewhere completes, fails or watches
 * nothing. Views never show receive ids. Another principal is played in-process (the two-uid case runs against whole
 * servers in pega-server).
 */
class PushCapabilityTest extends PushContract {
    private static final Principal STRANGER = Principal.uid(1_000_001);
    private static final Principal OWNER = Principal.inProcess();

    @Override
    String transports() {
        return "tcp";
    }

    private static void assertRefused(Runnable call, EngineException.Kind kind) {
        assertThatThrownBy(call::run)
                .isInstanceOfSatisfying(
                        EngineException.class, e -> assertThat(e.kind()).isEqualTo(kind));
    }

    private static void assertRefused(Runnable call, Status.Code code) {
        assertThatThrownBy(call::run)
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(code));
    }

    @Test
    void shouldRefuseAnotherPrincipalsPushesReceivesAndCancels() {
        List<Long> blocks = PushFixture.blocks(1, 2);
        try (LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            assertRefused(
                    () -> decodeNode.engine.prepareReceive(
                            STRANGER,
                            OptionalInt.of(ProcessUid.current()),
                            "decode-0",
                            "steal-d",
                            blocks,
                            List.of(loadState.name()),
                            10_000),
                    EngineException.Kind.PERMISSION_DENIED);
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", "own-d", blocks, List.of(loadState.name()), RPC);
            assertRefused(
                    () -> prefillNode.engine.startPush(
                            STRANGER,
                            OptionalInt.of(ProcessUid.current()),
                            "prefill-0",
                            0,
                            "steal-p",
                            prepared.getHandshake().toByteArray(),
                            blocks,
                            ready.name(),
                            pushState.name(),
                            10_000),
                    EngineException.Kind.PERMISSION_DENIED);
            assertRefused(
                    () -> decodeNode.engine.cancelReceive(STRANGER, prepared.getReceiveId()),
                    EngineException.Kind.PERMISSION_DENIED);
            assertThat(loadState.state()).as("the owner's receive is untouched").isEqualTo(LoadStateShm.PENDING);

            decodeNode.engine.cancelReceive(OWNER, prepared.getReceiveId());
            assertThat(loadState.awaitTerminal(Duration.ofSeconds(10))).isEqualTo(LoadStateShm.FAILURE);
        }
    }

    @Test
    void shouldRefuseAnotherUsersShmObjectAndMalformedNamesBeforeOpeningThem() throws Exception {
        List<Long> blocks = PushFixture.blocks(1);
        for (String bad : List.of("", "/", "..", "../../etc/passwd", "a/b", "x".repeat(251))) {
            assertThatThrownBy(() -> decodeClient.prepareReceive("decode-0", "bad-d", blocks, List.of(bad), RPC))
                    .as("load_state_shm '%s'", bad)
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).startsWith("invalid argument: load_state_shm: ");
                    });
        }
        assumeTrue(ProcessUid.current() == 0, "handing an object to another user needs root (as CI runs)");
        try (LoadStateShm foreign = LoadStateShm.create()) {
            Files.setAttribute(Path.of("/dev/shm", foreign.name().replaceFirst("^/", "")), "unix:uid", 4242);
            assertThatThrownBy(() ->
                            decodeClient.prepareReceive("decode-0", "foreign-d", blocks, List.of(foreign.name()), RPC))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
                        assertThat(e.getStatus().getDescription()).contains("belongs to another user");
                    });
            assertThat(foreign.state()).as("nothing was written into it").isEqualTo(LoadStateShm.PENDING);
        }
        assertThat(decodeNode.engine.view().receivesInFlight()).isZero();
    }

    @Test
    void shouldRefuseServerToServerCallsWithoutTheReceiveSecretAndStillPushByteExact() throws Exception {
        List<Long> from = PushFixture.blocks(4, 5, 6);
        List<Long> to = PushFixture.blocks(11, 12, 13);
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", decodeNode.port())
                .usePlaintext()
                .build();
        try (LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", "secret-d", to, List.of(loadState.name()), RPC);
            long id = prepared.getReceiveId();
            ByteString secret = PushHandshake.parseFrom(prepared.getHandshake()).getReceiveSecret();
            assertThat(secret.size()).isEqualTo(16);
            ByteString wrong = ByteString.copyFrom(new byte[16]);
            PdPushGrpc.PdPushBlockingStub stub =
                    PdPushGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);

            for (ByteString presented : List.of(ByteString.EMPTY, wrong)) {
                for (int l = 0; l < LAYERS; l++) {
                    int layer = l;
                    assertRefused(
                            () -> stub.layerArrived(LayerArrivedRequest.newBuilder()
                                    .setReceiveId(id)
                                    .setLayer(layer)
                                    .setReceiveSecret(presented)
                                    .build()),
                            Status.Code.FAILED_PRECONDITION);
                }
                assertRefused(
                        () -> stub.pushFailed(PushFailedRequest.newBuilder()
                                .setReceiveId(id)
                                .setReason("forged")
                                .setReceiveSecret(presented)
                                .build()),
                        Status.Code.FAILED_PRECONDITION);
                Iterator<?> watch = PdPushGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(2, TimeUnit.SECONDS)
                        .watchReceive(WatchReceiveRequest.newBuilder()
                                .setReceiveId(id)
                                .setReceiveSecret(presented)
                                .build());
                assertThatThrownBy(watch::hasNext)
                        .isInstanceOfSatisfying(
                                StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION));
            }
            // every refusal came before anything was queued for the receive agent
            assertThat(loadState.state())
                    .as("nothing completed or failed the receive")
                    .isEqualTo(LoadStateShm.PENDING);
            assertThat(decodeNode.engine.view().receives())
                    .singleElement()
                    .satisfies(r -> assertThat(r.id()).doesNotContain(Long.toUnsignedString(id)));

            for (int l = 0; l < LAYERS; l++) {
                PushFixture.writeLayer(prefill, l, from, 3);
            }
            ready.markReady(LAYERS);
            prefillClient.startPush("prefill-0", 0, "secret-p", prepared.getHandshake(), from, ready, pushState, RPC);
            assertThat(loadState.awaitTerminal(Duration.ofSeconds(20))).isEqualTo(LoadStateShm.SUCCESS);
            for (int l = 0; l < LAYERS; l++) {
                PushFixture.assertLayerEqual(prefill, decode, l, from, to);
            }
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
