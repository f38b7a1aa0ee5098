package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.QueryBlocksForTransferRequest;
import io.pegaflow.proto.RdmaHandshakeRequest;
import io.pegaflow.proto.ReleaseTransferLockRequest;
import io.pegaflow.proto.ext.push.CancelReceiveRequest;
import io.pegaflow.proto.ext.push.LayerArrivedRequest;
import io.pegaflow.proto.ext.push.PdPushGrpc;
import io.pegaflow.proto.ext.push.PrepareReceiveRequest;
import io.pegaflow.proto.ext.push.PushFailedRequest;
import io.pegaflow.proto.ext.push.PushLayer;
import io.pegaflow.proto.ext.push.RegisterPushLayersRequest;
import io.pegaflow.proto.ext.push.StartPushRequest;
import io.pegaflow.proto.ext.push.WatchReceiveRequest;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.SessionHandle;
import io.pegaflow.testkit.hostile.HostileCases;
import io.pegaflow.testkit.hostile.HostileValues;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.instancio.Random;
import org.instancio.generator.Generator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Property-based hostile input over real gRPC to the RPCs of the cluster (decision 0031 §5): arbitrary values in every
 * field of the transfer RPCs ({@code RdmaHandshake}, {@code QueryBlocksForTransfer}, {@code ReleaseTransferLock}) and
 * of every PdPush RPC ({@code RegisterPushLayers}, {@code PrepareReceive}, {@code CancelReceive}, {@code StartPush},
 * {@code LayerArrived}, {@code PushFailed}, {@code WatchReceive}), on a server with P2P and the push on and no cluster
 * credential, so every call reaches its service. Each call ends with a code its RPC documents, never INTERNAL or
 * UNKNOWN, with a short description that names no Java class; the server stays up and a victim tenant's bytes stay
 * exact. A second test puts a forged log line into every string field and checks that no line of the server's log
 * starts with it.
 *
 * <p>Cases come from Instancio with the seed of {@link HostileCases} (decision 0020); a failure names the seed and the
 * case, and {@code -Dpega.hostile.seed=<seed>} replays it.
 */
@ExtendWith({HostileCases.SeedInFailure.class, OutputCaptureExtension.class})
class HostileClusterRpcPropertiesTest {
    static final int TRIES = 60;
    private static final int MAX_BYTES = 255;
    private static final BlockPattern PATTERN = BlockPattern.perByte(78);
    private static final List<ByteString> VICTIM_HASHES = BlockPattern.hashes(4343, 4);
    /** A Java class or exception name in a description: the probe's {@code INTERNAL java.lang.ArithmeticException}. */
    private static final Pattern JAVA_NAME = Pattern.compile(
            "\\b(java|javax|jdk|sun|io\\.pegaflow|io\\.grpc|com\\.google)\\.[a-z]|[A-Za-z]+(Exception|Error)\\b");

    private static final String FORGED = "FORGED-LOG-LINE";
    private static final String FORGE = "x\n" + FORGED + " a\r\n" + FORGED + " b\u2028" + FORGED + " c\u0085" + FORGED;

    private static final Set<Status.Code> DOCUMENTED = Set.of(
            Status.Code.OK,
            Status.Code.INVALID_ARGUMENT,
            Status.Code.FAILED_PRECONDITION,
            Status.Code.NOT_FOUND,
            Status.Code.PERMISSION_DENIED,
            Status.Code.RESOURCE_EXHAUSTED,
            Status.Code.UNAVAILABLE,
            Status.Code.DEADLINE_EXCEEDED);

    private static HostileServer server;
    private static PegaEngine engine;
    private static MockScheduler client;
    private static MockVllmWorker victim;
    private static ManagedChannel channel;

    @BeforeAll
    static void startServer() {
        server = HostileServer.start(
                PATTERN,
                VICTIM_HASHES,
                "--pega.rdma.enabled=true",
                "--pega.rdma.nics=lo",
                "--pega.rdma.transports=tcp",
                "--pega.rdma.connect-timeout=2s",
                "--pega.pd.enabled=true",
                "--pega.pd.transports=tcp",
                // the lines that carry client strings (sessions, pushes, peers) are INFO and WARN
                "--logging.level.io.pegaflow=INFO");
        engine = server.engine;
        client = server.client;
        victim = server.victim;
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port)
                .usePlaintext()
                .build();
    }

    @AfterAll
    static void stopServer() throws InterruptedException {
        try {
            victim.verifyBlocks(blockIds(4), PATTERN);
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.drain();
            assertThat(engine.transferLockStats().sessions())
                    .as("lock sessions")
                    .isZero();
        } finally {
            server.close();
        }
    }

    @AfterEach
    void serverAndVictimUntouched() {
        server.assertVictimUntouched();
    }

    private static EngineGrpc.EngineBlockingStub engineStub() {
        return EngineGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
    }

    private static PdPushGrpc.PdPushBlockingStub push() {
        return PdPushGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
    }

    /** Runs the call; its code must be documented, never INTERNAL or UNKNOWN, its description short and class-free. */
    private static Status expect(Supplier<?> call) {
        Status status = Status.OK;
        try {
            assertThat((Object) call.get()).as("reply").isNotNull();
        } catch (StatusRuntimeException e) {
            status = e.getStatus();
        }
        String description = String.valueOf(status.getDescription());
        assertThat(status.getCode()).as("status %s", status).isIn(DOCUMENTED);
        assertThat(description.length()).as("description size").isLessThan(1000);
        assertThat(JAVA_NAME.matcher(description).find())
                .as("a Java name in %s", description)
                .isFalse();
        if (status.getCode() == Status.Code.INVALID_ARGUMENT) {
            assertThat(description).as("an INVALID_ARGUMENT says what").isNotBlank();
        }
        return status;
    }

    private static ByteString bytes(Random r) {
        return ByteString.copyFrom(HostileValues.bytes(r, MAX_BYTES));
    }

    private static <T> Stream<T> cases(Class<T> type, Generator<T> generator) {
        return HostileCases.cases(type, TRIES, generator);
    }

    record TransferCase(
            String requester, ByteString metadata, String namespace, List<ByteString> hashes, String session) {}

    static Stream<TransferCase> transferCases() {
        return cases(
                TransferCase.class,
                r -> new TransferCase(
                        HostileValues.string(r, 60),
                        bytes(r),
                        HostileValues.string(r, 40),
                        HostileValues.list(r, 6, HostileClusterRpcPropertiesTest::bytes),
                        HostileValues.string(r, 60)));
    }

    @ParameterizedTest(name = "[{index}]")
    @MethodSource("transferCases")
    void transferRpcsWithAnyFields(TransferCase c) {
        expect(() -> engineStub()
                .rdmaHandshake(RdmaHandshakeRequest.newBuilder()
                        .setRequesterId(c.requester())
                        .setHandshakeMetadata(c.metadata())
                        .build()));
        QueryBlocksForTransferRequest query = QueryBlocksForTransferRequest.newBuilder()
                .setNamespace(c.namespace())
                .addAllBlockHashes(c.hashes())
                .setRequesterId(c.requester())
                .build();
        expect(() -> engineStub().queryBlocksForTransfer(query));
        // the victim's own hashes under an invented requester: found, locked, and released below
        expect(() -> engineStub()
                .queryBlocksForTransfer(query.toBuilder()
                        .clearBlockHashes()
                        .addAllBlockHashes(VICTIM_HASHES)
                        .build()));
        expect(() -> engineStub()
                .releaseTransferLock(ReleaseTransferLockRequest.newBuilder()
                        .setTransferSessionId(c.session())
                        .build()));
        engine.cleanupMemory(); // ends every lock session the case opened
    }

    record PushCase(
            String instance,
            String request,
            int tpRank,
            int tpSize,
            int deviceId,
            List<PushLayer> layers,
            List<Long> blockIds,
            List<String> stateNames,
            long timeoutMs,
            long receiveId,
            ByteString secret,
            int layer,
            String reason,
            ByteString handshake) {}

    static Stream<PushCase> pushCases() {
        return cases(
                PushCase.class,
                r -> new PushCase(
                        HostileValues.string(r, 40),
                        HostileValues.string(r, 40),
                        HostileValues.anyInt(r),
                        HostileValues.anyInt(r),
                        HostileValues.anyInt(r),
                        HostileValues.list(
                                r,
                                3,
                                x -> PushLayer.newBuilder()
                                        .setName(HostileValues.string(x, 20))
                                        .setWrapperBytes(bytes(x))
                                        .setNumBlocks(HostileValues.anyLong(x))
                                        .setBytesPerBlock(HostileValues.anyLong(x))
                                        .setKvStrideBytes(HostileValues.anyLong(x))
                                        .setSegments(HostileValues.anyInt(x))
                                        .build()),
                        HostileValues.list(r, 6, HostileValues::anyLong),
                        HostileValues.list(r, 3, x -> HostileValues.string(x, 40)),
                        HostileValues.anyLong(r),
                        HostileValues.anyLong(r),
                        bytes(r),
                        HostileValues.anyInt(r),
                        HostileValues.string(r, 200),
                        bytes(r)));
    }

    @ParameterizedTest(name = "[{index}]")
    @MethodSource("pushCases")
    void pushRpcsWithAnyFields(PushCase c) {
        expect(() -> push().registerPushLayers(RegisterPushLayersRequest.newBuilder()
                .setInstanceId(c.instance())
                .setTpRank(c.tpRank())
                .setTpSize(c.tpSize())
                .setDeviceId(c.deviceId())
                .addAllLayers(c.layers())
                .build()));
        expect(() -> push().prepareReceive(PrepareReceiveRequest.newBuilder()
                .setInstanceId(c.instance())
                .setRequestId(c.request())
                .addAllBlockIds(c.blockIds())
                .addAllLoadStateShm(c.stateNames())
                .setTimeoutMs(c.timeoutMs())
                .build()));
        expect(() -> push().startPush(StartPushRequest.newBuilder()
                .setInstanceId(c.instance())
                .setTpRank(c.tpRank())
                .setRequestId(c.request())
                .setHandshake(c.handshake())
                .addAllBlockIds(c.blockIds())
                .setLayerReadyShm(c.stateNames().isEmpty() ? "" : c.stateNames().get(0))
                .setPushStateShm(c.reason())
                .setTimeoutMs(c.timeoutMs())
                .build()));
        expect(() -> push().layerArrived(LayerArrivedRequest.newBuilder()
                .setReceiveId(c.receiveId())
                .setTpRank(c.tpRank())
                .setLayer(c.layer())
                .setReceiveSecret(c.secret())
                .build()));
        expect(() -> push().pushFailed(PushFailedRequest.newBuilder()
                .setReceiveId(c.receiveId())
                .setTpRank(c.tpRank())
                .setReason(c.reason())
                .setReceiveSecret(c.secret())
                .build()));
        expect(() -> push().watchReceive(WatchReceiveRequest.newBuilder()
                        .setReceiveId(c.receiveId())
                        .setTpRank(c.tpRank())
                        .setReceiveSecret(c.secret())
                        .build())
                .hasNext());
        expect(() -> push().cancelReceive(CancelReceiveRequest.newBuilder()
                .setReceiveId(c.receiveId())
                .build()));
    }

    /** Every string field carries line breaks followed by a forged line: none of it starts a line of the log. */
    @Test
    void shouldNeverLetAClientStringStartALogLine(CapturedOutput output) {
        expect(() -> engineStub()
                .rdmaHandshake(RdmaHandshakeRequest.newBuilder()
                        .setRequesterId(FORGE)
                        .setHandshakeMetadata(ByteString.copyFromUtf8(FORGE))
                        .build()));
        expect(() -> engineStub()
                .queryBlocksForTransfer(QueryBlocksForTransferRequest.newBuilder()
                        .setNamespace(FORGE)
                        .addBlockHashes(ByteString.copyFromUtf8(FORGE))
                        .setRequesterId(FORGE)
                        .build()));
        expect(() -> engineStub()
                .releaseTransferLock(ReleaseTransferLockRequest.newBuilder()
                        .setTransferSessionId(FORGE)
                        .build()));
        expect(() -> push().registerPushLayers(RegisterPushLayersRequest.newBuilder()
                .setInstanceId(FORGE)
                .setTpSize(1)
                .addLayers(PushLayer.newBuilder().setName(FORGE).build())
                .build()));
        expect(() -> push().prepareReceive(PrepareReceiveRequest.newBuilder()
                .setInstanceId(FORGE)
                .setRequestId(FORGE)
                .addBlockIds(0)
                .addLoadStateShm(FORGE)
                .setTimeoutMs(1000)
                .build()));
        expect(() -> push().startPush(StartPushRequest.newBuilder()
                .setInstanceId(FORGE)
                .setRequestId(FORGE)
                .setLayerReadyShm(FORGE)
                .setPushStateShm(FORGE)
                .addBlockIds(0)
                .build()));
        expect(() -> push().pushFailed(PushFailedRequest.newBuilder()
                .setReceiveId(1)
                .setReason(FORGE)
                .build()));
        try (SessionHandle session = client.openSession(FORGE, FORGE, 1, 1)) {
            session.awaitHeaders(Duration.ofSeconds(5));
        }
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(output.getAll())
                        .as("a client string reached the log, escaped")
                        .contains(FORGED));
        assertThat(output.getAll().lines().filter(l -> l.startsWith(FORGED)))
                .as("log lines a client started")
                .isEmpty();
    }
}
