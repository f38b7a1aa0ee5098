package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.LeaseLoad;
import io.pegaflow.proto.LoadRequest;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.SaveLayer;
import io.pegaflow.proto.SaveRequest;
import io.pegaflow.proto.SaveResponse;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LoadResult;
import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.MockVllmWorker;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Save and Load over real gRPC: each validation error with its code and text, and for Load the load state the worker
 * sees: untouched (0) for request-shape errors, −1 for everything after the attach.
 */
@Timeout(120)
class SaveLoadValidationTest extends ConformanceSupport {
    private static final String ID = "save-load-validation";
    private static final BlockPattern PATTERN = BlockPattern.perByte(5);

    private static LeaseLoad leaseLoad(ByteString lease, List<Integer> ids) {
        return LeaseLoad.newBuilder().setLease(lease).addAllBlockIds(ids).build();
    }

    /** Saves all 4 blocks under {@code salt} and returns a lease on them. */
    private QueryReady savedLease(MockVllmWorker w, int salt) {
        List<ByteString> hashes = BlockPattern.hashes(salt, 4);
        w.fillBlocks(blockIds(4), PATTERN);
        w.save(blockIds(4), hashes);
        return awaitReady(w.instanceId(), hashes, 4, "lease-" + salt);
    }

    /** Sends a Load built from {@code w}'s request and changed by {@code change}; returns status and load state. */
    private static LoadResult rawLoad(
            MockVllmWorker w, List<LeaseLoad> loads, UnaryOperator<LoadRequest.Builder> change) {
        try (LoadStateShm state = LoadStateShm.create()) {
            LoadRequest request = change.apply(w.loadRequest(state.name(), loads, w.layerNames()).toBuilder())
                    .build();
            Status status = Status.OK;
            try {
                w.stub().load(request);
            } catch (StatusRuntimeException e) {
                status = e.getStatus();
            }
            long value = status.isOk() ? state.awaitTerminal(Duration.ofSeconds(5)) : state.state();
            return new LoadResult(status, value, state.name());
        }
    }

    private static void assertLoadFailed(LoadResult r, Status.Code code, String text, long shmState) {
        assertThat(r.code()).as("code of %s", r.status()).isEqualTo(code);
        assertThat(r.message()).isEqualTo(text);
        assertThat(r.shmState()).as("load state").isEqualTo(shmState);
    }

    // ------------------------------------------------------------------ Save

    @Test
    void shouldAnswerSaveWithOkStatus() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            w.fillBlocks(blockIds(4), PATTERN);

            SaveResponse response = w.save(blockIds(4), BlockPattern.hashes(60, 4));

            assertThat(response.hasStatus()).isTrue();
            assertThat(response.getStatus().getOk()).isTrue();
            assertThat(response.getStatus().getMessage()).isEmpty();
        }
    }

    /**
     * Bytes that are no SaveRequest (a field cut short, a stray end-group tag, a name that is not UTF-8): the
     * generated parser refuses them, and so does the server's own decoder, with INVALID_ARGUMENT (a marshaller's
     * failure would have reached the client as UNKNOWN), and the server goes on serving.
     */
    @Test
    void shouldRejectSaveWhoseBytesAreNotASaveRequest() {
        MethodDescriptor<byte[], SaveResponse> raw = EngineGrpc.getSaveMethod().toBuilder(
                        new RawBytes(), ProtoUtils.marshaller(SaveResponse.getDefaultInstance()))
                .build();
        byte[][] garbage = {
            {0x0A, 0x05, 'a'}, {0x22, 0x03, 0x12, 0x05, 0x01}, {0x0C}, {0x0A, 0x02, (byte) 0xC3, 0x28}, {(byte) 0xFF}
        };
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            for (byte[] bytes : garbage) {
                assertThatThrownBy(() ->
                                ClientCalls.blockingUnaryCall(w.stub().getChannel(), raw, CallOptions.DEFAULT, bytes))
                        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                            assertThat(e.getStatus().getDescription())
                                    .startsWith("invalid argument: SaveRequest is not valid protobuf: ");
                        });
            }
            w.fillBlocks(blockIds(4), PATTERN);
            assertThat(w.save(blockIds(4), BlockPattern.hashes(59, 4))
                            .getStatus()
                            .getOk())
                    .isTrue();
        }
    }

    /** Sends bytes as they are. */
    private static final class RawBytes implements MethodDescriptor.Marshaller<byte[]> {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            throw new UnsupportedOperationException("requests only");
        }
    }

    @Test
    void shouldRejectSaveWithNegativeDevice() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            SaveRequest request = w.saveRequest(blockIds(4), BlockPattern.hashes(61, 4)).toBuilder()
                    .setDeviceId(-1)
                    .build();

            assertStatus(() -> w.stub().save(request), Status.Code.INVALID_ARGUMENT, "device_id -1 must be >= 0");
        }
    }

    @Test
    void shouldRejectSaveWithMismatchedIdsAndHashes() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            SaveRequest request = w.saveRequest(blockIds(2), BlockPattern.hashes(62, 1));

            assertStatus(
                    () -> w.stub().save(request),
                    Status.Code.INVALID_ARGUMENT,
                    "block_ids length 2 does not match block_hashes 1 for layer layer_0");
        }
    }

    @Test
    void shouldRejectSaveForUnknownInstance() {
        try (MockVllmWorker w = refWorker("never-registered").build()) {
            assertStatus(
                    () -> w.save(blockIds(4), BlockPattern.hashes(63, 4)),
                    Status.Code.FAILED_PRECONDITION,
                    "instance never-registered not found");
        }
    }

    @Test
    void shouldRejectSaveForUnknownDevice() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            SaveRequest request = w.saveRequest(blockIds(4), BlockPattern.hashes(64, 4)).toBuilder()
                    .setDeviceId(5)
                    .build();

            assertStatus(
                    () -> w.stub().save(request),
                    Status.Code.FAILED_PRECONDITION,
                    "device 5 not found in instance " + ID);
        }
    }

    @Test
    void shouldRejectSaveFromAnotherPipelineStageNamingDeviceAndStage() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            SaveRequest request = w.saveRequest(blockIds(4), BlockPattern.hashes(65, 4)).toBuilder()
                    .setPpRank(1)
                    .build();

            assertStatus(
                    () -> w.stub().save(request),
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: device_id 0 is registered for tp_rank 0, pp_rank 0, but save requested"
                            + " tp_rank 0, pp_rank 1");
        }
    }

    @Test
    void shouldRejectSaveFromAnotherTpRank() {
        try (MockVllmWorker w = refWorker(ID).tp(0, 2).build()) {
            w.register();
            SaveRequest request = w.saveRequest(blockIds(4), BlockPattern.hashes(66, 4)).toBuilder()
                    .setTpRank(1)
                    .build();

            assertStatus(
                    () -> w.stub().save(request),
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: device_id 0 is registered for tp_rank 0, pp_rank 0, but save requested"
                            + " tp_rank 1, pp_rank 0");
        }
    }

    @Test
    void shouldRejectSaveOfUnknownLayer() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            SaveRequest request = SaveRequest.newBuilder()
                    .setInstanceId(ID)
                    .addSaves(SaveLayer.newBuilder()
                            .setLayerName("no_such_layer")
                            .addBlockIds(0)
                            .addBlockHashes(BlockPattern.hash(67, 0)))
                    .build();

            assertStatus(
                    () -> w.stub().save(request),
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: layer no_such_layer unknown");
        }
    }

    @Test
    void shouldRejectLayerOfAnotherStageOnSaveAndLoad() {
        try (MockVllmWorker pp0 = bareWorker(ID)
                        .layer("layer_0", KvLayout.contiguous(4, 1024))
                        .numLayers(2)
                        .build();
                MockVllmWorker pp1 = bareWorker(ID)
                        .layer("layer_1", KvLayout.contiguous(4, 1024))
                        .numLayers(2)
                        .deviceId(1)
                        .ppRank(1)
                        .build()) {
            pp0.register();
            pp1.register();
            SaveRequest save = SaveRequest.newBuilder()
                    .setInstanceId(ID)
                    .addSaves(SaveLayer.newBuilder()
                            .setLayerName("layer_1")
                            .addBlockIds(0)
                            .addBlockHashes(BlockPattern.hash(68, 0)))
                    .build();

            assertStatus(
                    () -> pp0.stub().save(save),
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: layer layer_1 not registered on device");

            // Both stages save: the block seals with both layers and a lease can be loaded per stage.
            List<ByteString> hashes = BlockPattern.hashes(68, 4);
            pp0.fillBlocks(blockIds(4), PATTERN);
            pp1.fillBlocks(blockIds(4), PATTERN);
            pp0.save(blockIds(4), hashes);
            pp1.save(blockIds(4), hashes);
            QueryReady ready = awaitReady(ID, hashes, 4, "pp");
            LoadResult wrongLayer = rawLoad(
                    pp0,
                    List.of(leaseLoad(ready.getLease(), blockIds(4))),
                    b -> b.clearLayerNames().addLayerNames("layer_1"));

            assertLoadFailed(
                    wrongLayer,
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: layer layer_1 not registered on device 0",
                    LoadStateShm.FAILURE);
        }
    }

    @Test
    void shouldDropOutOfRangeBlockIdsSilently() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(69, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            long usedBefore = engine.pool().usedBytes();

            SaveResponse dropped = w.save(List.of(-1, 4, 1000), hashes.subList(0, 3));
            engine.flushSeals();

            assertThat(dropped.getStatus().getOk()).isTrue();
            assertThat(engine.pool().usedBytes()).as("nothing allocated").isEqualTo(usedBefore);
            assertThat(scheduler
                            .queryUntilReady(ID, hashes.subList(0, 1), "none", WAIT)
                            .getNumHitBlocks())
                    .isZero();

            w.save(List.of(9, 1, -5), List.of(hashes.get(0), hashes.get(1), hashes.get(2)));
            QueryReady only = awaitReady(ID, List.of(hashes.get(1)), 1, "only-one");
            assertThat(scheduler
                            .queryUntilReady(ID, List.of(hashes.get(0)), "dropped", WAIT)
                            .getNumHitBlocks())
                    .isZero();
            w.zeroBlocks(blockIds(4));
            assertThat(w.load(only.getLease(), List.of(1)).succeeded()).isTrue();
            w.verifyBlocks(List.of(1), PATTERN);
            w.verifyZeroed(List.of(0, 2, 3));
        }
    }

    @Test
    void shouldTreatSaveWithoutLayersAsNoOp() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            SaveRequest empty = SaveRequest.newBuilder().setInstanceId(ID).build();

            assertThat(w.stub().save(empty).getStatus().getOk()).isTrue();
            assertThat(engine.pool().usedBytes()).isZero();
        }
    }

    // ------------------------------------------------------------------ Load

    @Test
    void shouldLeaveLoadStateAtZeroForMalformedLease() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();

            LoadResult shortLease = w.load(ByteString.copyFrom(new byte[3]), blockIds(4));
            LoadResult emptyLease = w.load(ByteString.EMPTY, blockIds(4));
            LoadResult longLease = w.load(ByteString.copyFrom(new byte[17]), blockIds(4));

            assertLoadFailed(
                    shortLease,
                    Status.Code.INVALID_ARGUMENT,
                    "query lease id must be 16 bytes, got 3",
                    LoadStateShm.PENDING);
            assertLoadFailed(
                    emptyLease, Status.Code.INVALID_ARGUMENT, "query lease id must be non-empty", LoadStateShm.PENDING);
            assertLoadFailed(
                    longLease,
                    Status.Code.INVALID_ARGUMENT,
                    "query lease id must be 16 bytes, got 17",
                    LoadStateShm.PENDING);
        }
    }

    @Test
    void shouldLeaveLoadStateAtZeroForNegativeDevice() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();

            LoadResult r = rawLoad(w, List.of(leaseLoad(unknownLease(), blockIds(4))), b -> b.setDeviceId(-1));

            assertLoadFailed(r, Status.Code.INVALID_ARGUMENT, "device_id -1 must be >= 0", LoadStateShm.PENDING);
        }
    }

    @Test
    void shouldSignalFailureForUnknownInstance() {
        try (MockVllmWorker w = refWorker("ghost-instance").build()) {
            LoadResult r = w.load(unknownLease(), blockIds(4));

            assertLoadFailed(
                    r, Status.Code.FAILED_PRECONDITION, "instance ghost-instance not found", LoadStateShm.FAILURE);
        }
    }

    @Test
    void shouldSignalFailureForUnknownDevice() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();

            LoadResult r = rawLoad(w, List.of(leaseLoad(unknownLease(), blockIds(4))), b -> b.setDeviceId(7));

            assertLoadFailed(
                    r, Status.Code.FAILED_PRECONDITION, "device 7 not found in instance " + ID, LoadStateShm.FAILURE);
        }
    }

    @Test
    void shouldSignalFailureForUnknownLease() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();

            LoadResult r = w.load(unknownLease(), blockIds(4));

            assertLoadFailed(
                    r, Status.Code.INTERNAL, "storage error: query lease is unknown or expired", LoadStateShm.FAILURE);
        }
    }

    @Test
    void shouldSignalFailureForUnknownLayerAfterConsumingTheShare() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            QueryReady ready = savedLease(w, 70);

            LoadResult r = rawLoad(
                    w,
                    List.of(leaseLoad(ready.getLease(), blockIds(4))),
                    b -> b.clearLayerNames().addLayerNames("no_such_layer"));

            assertLoadFailed(
                    r,
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: layer no_such_layer unknown for instance " + ID,
                    LoadStateShm.FAILURE);
            // Reference quirk kept: the share was consumed before the layer check.
            assertThat(w.load(ready.getLease(), blockIds(4)).message())
                    .isEqualTo("storage error: query lease is unknown or expired");
        }
    }

    @Test
    void shouldFailWhenLoadStateDoesNotExistWithoutConsumingTheLease() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            QueryReady ready = savedLease(w, 71);
            String missing = "pega_load_" + "0".repeat(32);
            LoadRequest request =
                    w.loadRequest(missing, List.of(leaseLoad(ready.getLease(), blockIds(4))), w.layerNames());

            Status status = statusOf(() -> w.stub().load(request));

            assertThat(status.getCode()).isEqualTo(Status.Code.INTERNAL);
            assertThat(status.getDescription())
                    .startsWith("storage error: LoadState: ")
                    .contains(missing);
            w.zeroBlocks(blockIds(4));
            assertThat(w.load(ready.getLease(), blockIds(4)).succeeded())
                    .as("lease still usable")
                    .isTrue();
            w.verifyBlocks(blockIds(4), PATTERN);
        }
    }

    @Test
    void shouldFailWhenLoadStateHasWrongMagic() {
        try (MockVllmWorker w = refWorker(ID).build();
                LoadStateShm bogus = LoadStateShm.createWithHeader(0x0BADF00D, LoadStateShm.VERSION)) {
            w.register();
            LoadRequest request =
                    w.loadRequest(bogus.name(), List.of(leaseLoad(unknownLease(), blockIds(4))), w.layerNames());

            Status status = statusOf(() -> w.stub().load(request));

            assertThat(status.getCode()).isEqualTo(Status.Code.INTERNAL);
            assertThat(status.getDescription())
                    .startsWith("storage error: LoadState: ")
                    .contains("magic 0xbadf00d");
            assertThat(bogus.state()).isEqualTo(LoadStateShm.PENDING);
        }
    }

    @Test
    void shouldRejectTraversalInLoadStateName() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            LoadRequest request =
                    w.loadRequest("../../etc/passwd", List.of(leaseLoad(unknownLease(), blockIds(4))), w.layerNames());

            Status status = statusOf(() -> w.stub().load(request));

            assertThat(status.getCode()).isEqualTo(Status.Code.INTERNAL);
            assertThat(status.getDescription()).startsWith("storage error: LoadState: invalid shared-memory name");
        }
    }

    @Test
    void shouldSucceedAtOnceWhenThereIsNothingToCopy() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            QueryReady ready = savedLease(w, 72);
            w.zeroBlocks(blockIds(4));

            LoadResult noLeases = rawLoad(w, List.of(), b -> b);
            LoadResult negativeIds = w.load(ready.getLease(), List.of(-1, -1, -1, -1));

            assertThat(noLeases.succeeded()).isTrue();
            assertThat(negativeIds.succeeded()).isTrue();
            w.verifyZeroed(blockIds(4));
        }
    }

    @Test
    void shouldSignalAsyncFailureForBlockIdPastTheLayer() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            QueryReady ready = savedLease(w, 73);
            w.zeroBlocks(blockIds(4));

            LoadResult r = w.load(ready.getLease(), List.of(0, 1, 2, 4));

            assertThat(r.rpcOk()).as("accepted, fails on the load lane").isTrue();
            assertThat(r.shmState()).isEqualTo(LoadStateShm.FAILURE);
        }
    }

    @Test
    void shouldConcatenateSeveralLeasesOfOneLoad() {
        try (MockVllmWorker w =
                bareWorker(ID).layer("layer_0", KvLayout.contiguous(8, 1024)).build()) {
            w.register();
            List<ByteString> first = BlockPattern.hashes(74, 2);
            List<ByteString> second = BlockPattern.hashes(75, 2);
            w.fillBlocks(blockIds(4), PATTERN);
            w.save(blockIds(2), first);
            w.save(blockIds(2, 4), second);
            QueryReady a = awaitReady(ID, first, 2, "a");
            QueryReady b = awaitReady(ID, second, 2, "b");
            w.zeroBlocks(blockIds(8));

            LoadResult r = w.load(
                    List.of(leaseLoad(a.getLease(), blockIds(2)), leaseLoad(b.getLease(), blockIds(2, 4))),
                    w.layerNames(),
                    Duration.ofSeconds(5));

            assertThat(r.succeeded()).isTrue();
            w.verifyBlocks(blockIds(4), PATTERN);
            w.verifyZeroed(blockIds(4, 8));
        }
    }

    @Test
    void shouldKeepEarlierLeaseConsumedWhenALaterOneFails() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            w.register();
            QueryReady ready = savedLease(w, 76);

            LoadResult r = w.load(
                    List.of(leaseLoad(ready.getLease(), blockIds(4)), leaseLoad(unknownLease(), blockIds(4))),
                    w.layerNames(),
                    Duration.ofSeconds(5));

            assertLoadFailed(
                    r, Status.Code.INTERNAL, "storage error: query lease is unknown or expired", LoadStateShm.FAILURE);
            assertThat(engine.activeLeases()).isZero();
        }
    }
}
