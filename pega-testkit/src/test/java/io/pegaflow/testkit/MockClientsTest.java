package io.pegaflow.testkit;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.RegisterContextRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The mock worker and scheduler against {@link FakeEngine}: request shapes, byte movement, waits, sessions. */
@Timeout(60)
class MockClientsTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    private FakeEngine engine;
    private MockScheduler scheduler;

    @BeforeEach
    void startEngine() throws Exception {
        engine = new FakeEngine();
        scheduler = MockScheduler.connect("127.0.0.1", engine.port());
    }

    @AfterEach
    void stopEngine() throws Exception {
        scheduler.close();
        engine.close();
    }

    @Test
    void shouldSendTheReferenceRegistration() {
        try (MockVllmWorker worker =
                ReferenceHarness.worker("127.0.0.1", engine.port()).build()) {
            assertThat(worker.register().getStatus().getOk()).isTrue();

            RegisterContextRequest r = engine.registrations.get(0);
            assertThat(r.getInstanceId()).isEqualTo("mock-vllm-rpc-e2e");
            assertThat(r.getNamespace()).isEqualTo("mock-vllm");
            assertThat(r.getTpRank()).isZero();
            assertThat(r.getTpSize()).isEqualTo(1);
            assertThat(r.getWorldSize()).isEqualTo(1);
            assertThat(r.getNumLayers()).isEqualTo(1);
            assertThat(r.getLayerNamesList()).containsExactly("layer_0");
            assertThat(r.getNumBlocksList()).containsExactly(4L);
            assertThat(r.getBytesPerBlockList()).containsExactly(1024L);
            assertThat(r.getKvStrideBytesList()).containsExactly(0L);
            assertThat(r.getSegmentsList()).containsExactly(1);
            String shm = worker.layers().get(0).memory().name();
            assertThat(r.getWrapperBytes(0).toString(StandardCharsets.UTF_8))
                    .isEqualTo("{\"kind\":\"host-shm\",\"name\":\"" + shm + "\",\"offset\":0,\"size\":4096}");
        }
    }

    @Test
    void shouldRoundTripTheReferenceScenarioWithTheUniformFill() {
        List<ByteString> hashes = BlockPattern.hashes(17, 4);
        try (MockVllmWorker worker =
                ReferenceHarness.worker("127.0.0.1", engine.port()).build()) {
            worker.register();
            assertThat(scheduler.query(worker.instanceId(), hashes, "cold").getReady())
                    .isEqualTo(QueryReady.newBuilder().setNumHitBlocks(0).build());

            worker.fillBlocks(blockIds(4), BlockPattern.uniform(0));
            assertThat(worker.layers().get(0).memory().readBytes(2 * 1024, 1024))
                    .containsOnly((byte) 3);
            worker.save(blockIds(4), hashes);
            assertThat(scheduler.awaitSealed(worker.instanceId(), hashes, WAIT)).isEqualTo(4);

            QueryReady ready = scheduler.queryUntilReady(worker.instanceId(), hashes, "req-1", WAIT);
            assertThat(ready.getNumHitBlocks()).isEqualTo(4);
            worker.zeroBlocks(blockIds(4));
            worker.verifyZeroed(blockIds(4));

            LoadResult result = worker.load(ready.getLease(), blockIds(4));
            assertThat(result.succeeded()).isTrue();
            assertThat(Files.exists(Path.of("/dev/shm", result.shmName()))).isFalse();
            worker.verifyBlocks(blockIds(4), BlockPattern.uniform(0));
        }
    }

    @Test
    void shouldRoundTripSplitLayersSharingOneShmAndLeaveOtherBytesAlone() {
        KvLayout layout = KvLayout.kvFirst(4, 4, 2, 8, 2); // B = 128, K = 512: split
        List<ByteString> hashes = BlockPattern.hashes32(5, 2);
        try (MockVllmWorker worker = MockVllmWorker.builder("127.0.0.1", engine.port())
                .sharedLayers(List.of("layer_0", "layer_1"), layout)
                .build()) {
            assertThat(worker.layers().get(0).memory())
                    .isSameAs(worker.layers().get(1).memory());
            assertThat(worker.layers().get(1).offsetBytes()).isEqualTo(4096);
            worker.register();
            assertThat(engine.registrations.get(0).getNumLayers()).isEqualTo(2);

            worker.fillBlocks(blockIds(1, 3), 5);
            worker.save(blockIds(1, 3), hashes);
            scheduler.awaitSealed(worker.instanceId(), hashes, WAIT);
            worker.zeroBlocks(blockIds(1, 3));
            ShmDeviceMemory shm = worker.layers().get(0).memory();
            shm.fill(0, 128, (byte) 0x55); // block 0's K plane is not part of the load

            QueryReady ready = scheduler.queryUntilReady(worker.instanceId(), hashes, "req-split", WAIT);
            LoadResult result = worker.load(ready.getLease(), List.of(2, 3));
            assertThat(result.succeeded()).isTrue();

            // hash i was saved from block i + 1 and loaded into block i + 2: block 3 holds block 2's bytes
            worker.verifyZeroed(List.of(1));
            assertThat(worker.firstMismatch(List.of(3), BlockPattern.perByte(5)))
                    .hasValueSatisfying(m -> assertThat(m).contains("layer_0 block 3 K plane"));
            BlockPattern layer1 = BlockPattern.perByte(5).forSlot("layer_1", 0);
            long layer1Block3 = worker.layers().get(1).offsetBytes() + layout.segmentOffset(3, 1);
            assertThat(shm.readBytes(layer1Block3, 128)).isEqualTo(layer1.bytes(2, 128, 128));
            assertThat(shm.readBytes(0, 128)).containsOnly((byte) 0x55);
        }
    }

    @Test
    void shouldNameTheCorruptedPlaneWhenVerificationFails() {
        KvLayout layout = KvLayout.kvFirst(2, 4, 2, 8, 2);
        try (MockVllmWorker worker = MockVllmWorker.builder("127.0.0.1", engine.port())
                .layer("layer_0", layout)
                .build()) {
            worker.fillBlocks(blockIds(2), 9);
            worker.verifyBlocks(blockIds(2), 9);
            LayerRegion layer = worker.layers().get(0);
            long vByte = layer.offsetBytes() + layout.segmentOffset(1, 1) + 7;
            byte[] original = layer.memory().readBytes(vByte, 1);
            layer.memory().writeBytes(vByte, new byte[] {(byte) ~original[0]});

            assertThatThrownBy(() -> worker.verifyBlocks(blockIds(2), 9))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("layer_0 block 1 V plane: 1 of 128 bytes differ, first at byte 7");
            assertThatThrownBy(() -> worker.verifyBlocks(blockIds(2), 10)).isInstanceOf(AssertionError.class);
            assertThatThrownBy(() -> worker.fillBlocks(List.of(2), 9)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void shouldReportALoadFailureThroughStatusAndShmState() {
        try (MockVllmWorker worker =
                ReferenceHarness.worker("127.0.0.1", engine.port()).build()) {
            worker.register();
            LoadResult result = worker.load(ByteString.copyFromUtf8("0123456789abcdef"), blockIds(4));

            assertThat(result.rpcOk()).isFalse();
            assertThat(result.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(result.message()).isEqualTo("lease mismatch");
            assertThat(result.shmFailed()).isTrue();
        }
    }

    @Test
    void shouldKeepCallerOwnedMemoryOpenAndUnlinkOwnMemoryOnClose() {
        Path owned;
        try (ShmDeviceMemory external = ShmDeviceMemory.create(8192)) {
            try (MockVllmWorker worker = MockVllmWorker.builder("127.0.0.1", engine.port())
                    .layer("a", ReferenceHarness.LAYOUT, external, 0)
                    .layer("b", ReferenceHarness.LAYOUT, external, 4096)
                    .layer("c", ReferenceHarness.LAYOUT)
                    .build()) {
                owned = Path.of(worker.layers().get(2).memory().path());
                assertThat(worker.registerRequest().getWrapperBytes(1).toStringUtf8())
                        .contains("\"offset\":4096,\"size\":4096");
            }
            assertThat(Files.exists(owned)).isFalse();
            assertThat(external.isClosed()).isFalse();
            assertThatThrownBy(() -> MockVllmWorker.builder("127.0.0.1", engine.port())
                            .layer("d", ReferenceHarness.LAYOUT, external, 4097)
                            .build())
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void shouldPollWhileLoadingAndReleaseLeases() {
        engine.loadingAnswers.set(3);
        QueryReady ready = scheduler.queryUntilReady("any", BlockPattern.hashes(1, 2), "req-loading", WAIT);
        assertThat(ready.getNumHitBlocks()).isZero();
        assertThat(engine.loadingAnswers.get()).isZero();

        engine.loadingAnswers.set(Integer.MAX_VALUE);
        assertThatThrownBy(() -> scheduler.queryUntilReady("any", List.of(), "req-stuck", Duration.ofMillis(50)))
                .isInstanceOf(TestkitTimeoutException.class);
        engine.loadingAnswers.set(0);

        assertThatThrownBy(() -> scheduler.release(ByteString.copyFromUtf8("0123456789abcdef")))
                .isInstanceOf(StatusRuntimeException.class)
                .hasMessageContaining("query lease is unknown or expired");
    }

    @Test
    void shouldCancelTheSessionStreamOnClose() throws Exception {
        SessionHandle session = scheduler.openSession("mock-vllm-rpc-e2e", "mock-vllm", 2, 2);
        assertThat(session.awaitClosed(Duration.ofMillis(100))).isEmpty();
        assertThat(session.isOpen()).isTrue();
        // a cancel that overtakes the call's start would never reach the handler's hook
        assertThat(engine.sessionOpened.await(30, TimeUnit.SECONDS)).isTrue();

        session.close();

        assertThat(engine.sessionCancelled.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(engine.lastSession.getTpSize()).isEqualTo(2);
        assertThat(engine.lastSession.getWorldSize()).isEqualTo(2);
        assertThat(session.awaitClosed(WAIT))
                .hasValueSatisfying(s -> assertThat(s.getCode()).isEqualTo(Status.Code.CANCELLED));
        assertThat(session.eventsReceived()).isZero();
        session.close();
    }
}
