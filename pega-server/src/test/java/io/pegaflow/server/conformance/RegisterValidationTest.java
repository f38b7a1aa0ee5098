package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.RegisterContextRequest;
import io.pegaflow.proto.RegisterContextResponse;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ShmDeviceMemory;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * RegisterContextBatch over real gRPC: every validation error with its exact code and text, and no instance or
 * server-side mapping left behind by a rejected request.
 */
@Timeout(120)
class RegisterValidationTest extends ConformanceSupport {
    private static final String ID = "register-validation";

    /** Sends a broken variant of {@code w}'s request; asserts the error, that no instance exists and nothing is mapped. */
    private void assertRejected(
            MockVllmWorker w, UnaryOperator<RegisterContextRequest.Builder> breaker, Status.Code code, String text) {
        RegisterContextRequest request =
                breaker.apply(w.registerRequest().toBuilder()).build();

        assertStatus(() -> w.stub().registerContextBatch(request), code, text);

        assertThat(engine.instanceIds()).doesNotContain(request.getInstanceId());
        for (var layer : w.layers()) {
            assertThat(mappingsOf(layer.memory().name()))
                    .as("server mappings of %s", layer.name())
                    .isEqualTo(1);
        }
    }

    static Stream<Arguments> shapeErrors() {
        return Stream.of(
                Arguments.of(
                        "negative device",
                        (UnaryOperator<RegisterContextRequest.Builder>) b -> b.setDeviceId(-1),
                        "device_id -1 must be >= 0"),
                Arguments.of(
                        "zero layers",
                        (UnaryOperator<RegisterContextRequest.Builder>) b -> b.setNumLayers(0),
                        "num_layers must be > 0"),
                Arguments.of(
                        "zero tp size",
                        (UnaryOperator<RegisterContextRequest.Builder>) b -> b.setTpSize(0),
                        "tp_size must be > 0"),
                Arguments.of(
                        "zero world size",
                        (UnaryOperator<RegisterContextRequest.Builder>) b -> b.setWorldSize(0),
                        "world_size must be > 0"),
                Arguments.of(
                        "tp rank equal to size",
                        (UnaryOperator<RegisterContextRequest.Builder>)
                                b -> b.setTpRank(2).setTpSize(2),
                        "tp_rank 2 out of range (tp_size 2)"),
                Arguments.of(
                        "tp rank as unsigned",
                        (UnaryOperator<RegisterContextRequest.Builder>)
                                b -> b.setTpRank(-1).setTpSize(2),
                        "tp_rank 4294967295 out of range (tp_size 2)"),
                Arguments.of(
                        "missing num_blocks",
                        (UnaryOperator<RegisterContextRequest.Builder>) RegisterContextRequest.Builder::clearNumBlocks,
                        "all layer arrays must have the same non-zero length (got layer_names=1)"),
                Arguments.of(
                        "missing wrapper",
                        (UnaryOperator<RegisterContextRequest.Builder>)
                                RegisterContextRequest.Builder::clearWrapperBytes,
                        "all layer arrays must have the same non-zero length (got layer_names=1)"),
                Arguments.of(
                        "extra bytes_per_block",
                        (UnaryOperator<RegisterContextRequest.Builder>) b -> b.addBytesPerBlock(1024),
                        "all layer arrays must have the same non-zero length (got layer_names=1)"),
                Arguments.of(
                        "missing kv stride",
                        (UnaryOperator<RegisterContextRequest.Builder>)
                                RegisterContextRequest.Builder::clearKvStrideBytes,
                        "all layer arrays must have the same non-zero length (got layer_names=1)"),
                Arguments.of(
                        "extra segments",
                        (UnaryOperator<RegisterContextRequest.Builder>) b -> b.addSegments(1),
                        "all layer arrays must have the same non-zero length (got layer_names=1)"),
                Arguments.of(
                        "extra layer name",
                        (UnaryOperator<RegisterContextRequest.Builder>) b -> b.addLayerNames("layer_1"),
                        "all layer arrays must have the same non-zero length (got layer_names=2)"),
                Arguments.of(
                        "no layers at all",
                        (UnaryOperator<RegisterContextRequest.Builder>) b -> b.clearLayerNames()
                                .clearWrapperBytes()
                                .clearNumBlocks()
                                .clearBytesPerBlock()
                                .clearKvStrideBytes()
                                .clearSegments(),
                        "all layer arrays must have the same non-zero length (got layer_names=0)"),
                Arguments.of(
                        "tp size far past any real group",
                        (UnaryOperator<RegisterContextRequest.Builder>) b -> b.setTpSize(Integer.MAX_VALUE),
                        "tp_size 2147483647 exceeds the supported maximum of 1024"),
                Arguments.of(
                        "world size as unsigned",
                        (UnaryOperator<RegisterContextRequest.Builder>) b -> b.setWorldSize(-1),
                        "world_size 4294967295 exceeds the supported maximum of 65536"),
                Arguments.of(
                        "num layers past the bound",
                        (UnaryOperator<RegisterContextRequest.Builder>) b -> b.setNumLayers(1 << 20),
                        "num_layers 1048576 exceeds the supported maximum of 4096"),
                Arguments.of(
                        "slots per block past the bound",
                        (UnaryOperator<RegisterContextRequest.Builder>)
                                b -> b.setNumLayers(4096).setTpSize(32),
                        "num_layers 4096 x tp_size 32 exceeds the supported maximum of 65536 slots per block"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shapeErrors")
    void shouldRejectMalformedRequestWithExactMessage(
            String label, UnaryOperator<RegisterContextRequest.Builder> breaker, String text) {
        try (MockVllmWorker w = refWorker(ID).build()) {
            assertRejected(w, breaker, Status.Code.INVALID_ARGUMENT, text);
        }
    }

    @Test
    void shouldRejectBatchLargerThanNumLayers() {
        try (MockVllmWorker w = bareWorker(ID)
                .layer("layer_0", KvLayout.contiguous(4, 1024))
                .layer("layer_1", KvLayout.contiguous(4, 1024))
                .numLayers(1)
                .build()) {
            assertRejected(w, b -> b, Status.Code.INVALID_ARGUMENT, "layer batch size 2 exceeds instance num_layers 1");
        }
    }

    static Stream<Arguments> layoutErrors() {
        return Stream.of(
                Arguments.of(
                        "one byte short",
                        KvLayout.contiguous(4, 1024).withTensorBytes(4095),
                        "registered memory too small: need 4096 bytes, got 4095"),
                Arguments.of(
                        "split V plane past the end",
                        KvLayout.kvFirst(8, 16, 1, 16, 2).withTensorBytes(8191),
                        "registered memory too small: need 8192 bytes, got 8191"),
                Arguments.of(
                        "two segments without stride",
                        new KvLayout(4, 1024, 0, 2, 8192),
                        "kv_stride_bytes must be > 0 when segments > 1"),
                Arguments.of(
                        "zero blocks",
                        new KvLayout(0, 1024, 0, 1, 4096),
                        "bytes_per_block, num_blocks, and segments must be non-zero"),
                Arguments.of(
                        "zero bytes per block",
                        new KvLayout(4, 0, 0, 1, 4096),
                        "bytes_per_block, num_blocks, and segments must be non-zero"),
                Arguments.of(
                        "zero segments",
                        new KvLayout(4, 1024, 0, 0, 4096),
                        "bytes_per_block, num_blocks, and segments must be non-zero"),
                Arguments.of(
                        "two segments whose stride overlaps K",
                        new KvLayout(8, 4096, 1024, 2, 33792),
                        "kv_stride_bytes 1024 overlaps the K segment: with 2 segments it must be >= bytes_per_block "
                                + "4096"),
                Arguments.of(
                        "equal stride one byte short of the copied length",
                        new KvLayout(4, 1024, 1024, 2, 5119),
                        "registered memory too small: need 5120 bytes, got 5119"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("layoutErrors")
    void shouldRejectBadLayoutAndUnmapIt(String label, KvLayout layout, String reason) {
        try (MockVllmWorker w = bareWorker(ID).layer("layer_0", layout).build()) {
            assertRejected(w, b -> b, Status.Code.INVALID_ARGUMENT, "invalid argument: layer layer_0: " + reason);
        }
    }

    @Test
    void shouldNameTheMissingObjectWhenLaterLayerFails() {
        try (MockVllmWorker w = bareWorker(ID)
                .layer("layer_0", KvLayout.contiguous(4, 1024))
                .layer("layer_1", KvLayout.contiguous(4, 1024))
                .build()) {
            String missing = "pega_dev_missing_" + System.nanoTime();
            RegisterContextRequest request = w.registerRequest().toBuilder()
                    .setWrapperBytes(1, ByteString.copyFrom(ShmDeviceMemory.descriptorJson(missing, 0, 4096)))
                    .build();

            Status status = statusOf(() -> w.stub().registerContextBatch(request));

            assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(status.getDescription())
                    .startsWith("invalid argument: host descriptor: /dev/shm/" + missing + " cannot be opened");
            assertThat(mappingsOf(shmOf(w)))
                    .as("layer_0 was mapped, then closed again")
                    .isEqualTo(1);
            assertThat(engine.instanceIds()).isEmpty();
        }
    }

    static Stream<Arguments> hostileWrappers() {
        return Stream.of(
                Arguments.of(
                        "traversal",
                        ShmDeviceMemory.descriptorJson("pega_../../etc/passwd", 0, 1),
                        "invalid argument: host descriptor: name must match"),
                Arguments.of(
                        "outside /dev/shm",
                        ShmDeviceMemory.descriptorJson("etc_passwd", 0, 1),
                        "invalid argument: host descriptor: name must match"),
                Arguments.of(
                        "not JSON",
                        "{not json".getBytes(StandardCharsets.UTF_8),
                        "invalid argument: host descriptor: malformed JSON"),
                Arguments.of(
                        "pickled CudaIPCWrapper",
                        new byte[] {(byte) 0x80, 4, (byte) 0x95, 0, 0},
                        "invalid argument: wrapper_bytes is a pickled CudaIPCWrapper, but this server runs the host"
                                + " device backend"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hostileWrappers")
    void shouldRejectHostileWrapperBytes(String label, byte[] wrapper, String prefix) {
        try (MockVllmWorker w = refWorker(ID).build()) {
            RegisterContextRequest request = w.registerRequest().toBuilder()
                    .setWrapperBytes(0, ByteString.copyFrom(wrapper))
                    .build();

            Status status = statusOf(() -> w.stub().registerContextBatch(request));

            assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(status.getDescription()).startsWith(prefix);
            assertThat(engine.instanceIds()).isEmpty();
        }
    }

    @Test
    void shouldRejectRangePastTheObjectWithoutMapping() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            String name = shmOf(w);
            RegisterContextRequest request = w.registerRequest().toBuilder()
                    .setWrapperBytes(0, ByteString.copyFrom(ShmDeviceMemory.descriptorJson(name, 4096, 1)))
                    .build();

            Status status = statusOf(() -> w.stub().registerContextBatch(request));

            assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(status.getDescription()).contains("range [4096, 4097) exceeds /dev/shm/" + name);
            assertThat(mappingsOf(name)).isEqualTo(1);
        }
    }

    @Test
    void shouldAnswerOkStatusAndHoldOneMappingPerRegisteredObject() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            RegisterContextResponse response = w.register();

            assertThat(response.hasStatus()).isTrue();
            assertThat(response.getStatus().getOk()).isTrue();
            assertThat(response.getStatus().getMessage()).isEmpty();
            assertThat(mappingsOf(shmOf(w))).as("worker + server").isEqualTo(2);
            assertThat(engine.instanceIds()).containsExactly(ID);
            w.unregister();
            assertThat(mappingsOf(shmOf(w))).isEqualTo(1);
        }
    }

    @Test
    void shouldRejectTopologyMismatchOfExistingInstance() {
        try (MockVllmWorker first = refWorker(ID).build();
                MockVllmWorker world2 = refWorker(ID).deviceId(1).worldSize(2).build();
                MockVllmWorker tp2 = refWorker(ID).deviceId(2).tp(0, 2).build()) {
            first.register();

            assertStatus(
                    world2::register,
                    Status.Code.FAILED_PRECONDITION,
                    "topology mismatch: instance " + ID + " exists with tp=1, world=1; requested tp=1, world=2");
            assertStatus(
                    tp2::register,
                    Status.Code.FAILED_PRECONDITION,
                    "topology mismatch: instance " + ID + " exists with tp=1, world=1; requested tp=2, world=1");
            assertThat(mappingsOf(shmOf(world2))).isEqualTo(1);
            assertThat(mappingsOf(shmOf(tp2))).isEqualTo(1);
        }
    }

    @Test
    void shouldRejectSecondRegistrationOfTheSameDevice() {
        try (MockVllmWorker first = refWorker(ID).build();
                MockVllmWorker again = refWorker(ID).build()) {
            first.register();

            assertStatus(
                    again::register,
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: GPU context for device 0 already exists");
            assertStatus(
                    first::register,
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: GPU context for device 0 already exists");
            assertThat(mappingsOf(shmOf(again))).isEqualTo(1);
            assertThat(mappingsOf(shmOf(first)))
                    .as("the first registration's mapping only")
                    .isEqualTo(2);
        }
    }

    @Test
    void shouldNotLetARejectedDuplicateDeviceChangeTheInstanceSlots() {
        try (MockVllmWorker first = refWorker(ID).build();
                MockVllmWorker intruder = bareWorker(ID)
                        .layer("layer_extra", KvLayout.contiguous(4, 1024))
                        .build()) {
            first.register();
            assertStatus(
                    intruder::register,
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: GPU context for device 0 already exists");
            List<ByteString> hashes = BlockPattern.hashes(120, 4);
            first.fillBlocks(blockIds(4), BlockPattern.perByte(120));

            first.save(blockIds(4), hashes);

            // A rejected request must not register its layer: otherwise every block waits for a slot nobody saves.
            QueryReady ready = awaitReady(ID, hashes, 4, "still-seals");
            first.zeroBlocks(blockIds(4));
            assertThat(first.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            first.verifyBlocks(blockIds(4), BlockPattern.perByte(120));
        }
    }

    @Test
    void shouldNotCheckNamespaceOrNumLayersOfLaterRegistrations() {
        try (MockVllmWorker first = refWorker(ID).build();
                MockVllmWorker second = refWorker(ID)
                        .deviceId(1)
                        .namespace("other-namespace")
                        .numLayers(3)
                        .build()) {
            first.register();

            assertThat(second.register().getStatus().getOk()).isTrue();
            assertThat(engine.instanceIds()).containsExactly(ID);
        }
    }

    @Test
    void shouldAcceptEmptyInstanceIdLikeTheReference() {
        try (MockVllmWorker w = refWorker("").build()) {
            assertThat(w.register().getStatus().getOk()).isTrue();

            assertThat(engine.instanceIds()).containsExactly("");
        }
    }

    @Test
    void shouldStartANewInstanceAfterUnregister() {
        try (MockVllmWorker first = refWorker(ID).build();
                MockVllmWorker reborn = refWorker(ID).worldSize(2).build()) {
            first.register();
            first.unregister();

            assertThat(reborn.register().getStatus().getOk()).isTrue();
            assertThat(engine.instanceIds()).containsExactly(ID);
        }
    }

    @Test
    void shouldRejectEmptyLayerName() {
        try (MockVllmWorker w = refWorker(ID).build()) {
            assertRejected(
                    w, b -> b.setLayerNames(0, ""), Status.Code.INVALID_ARGUMENT, "layer names must not be empty");
        }
    }
}
