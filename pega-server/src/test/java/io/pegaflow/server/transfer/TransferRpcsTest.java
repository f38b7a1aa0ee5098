package io.pegaflow.server.transfer;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.QueryBlocksForTransferRequest;
import io.pegaflow.proto.QueryBlocksForTransferResponse;
import io.pegaflow.proto.RdmaHandshakeRequest;
import io.pegaflow.proto.RdmaHandshakeResponse;
import io.pegaflow.proto.ReleaseTransferLockRequest;
import io.pegaflow.proto.TransferBlockInfo;
import io.pegaflow.proto.TransferSlotInfo;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.sys.Posix;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.TransferBatch;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferResult;
import io.pegaflow.transfer.ucx.UcxTransferEngine;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;

/**
 * The owner's P2P RPCs on a real server with {@code pega.rdma.enabled=true} over UCX TCP on loopback, against a
 * requester that is a bare transfer engine in this JVM: a handshake connects both ways and a get of the locked
 * segments copies the owner's pool bytes exactly; garbage metadata is INVALID_ARGUMENT, a peer that disagrees on N or
 * the NIC count is refused naming both values; locks end once (double release answers 0), expire after the timeout
 * (blocks evictable again, a late release answers 0), and end at once when their holder comes back as a new
 * incarnation.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host",
            "pega.rdma.enabled=true",
            "pega.rdma.nics=lo",
            "pega.rdma.transports=tcp",
            "pega.rdma.transfer-lock-timeout=3s",
            "pega.rdma.transfer-timeout=2s"
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TransferRpcsTest {
    static final String HOST = "127.0.0.1";
    static final String NAMESPACE = "ns-p2p";
    static final Duration WAIT = Duration.ofSeconds(20);

    static PinnedMemoryPool requesterPool;
    static TransferEngine requester;

    @Autowired
    GrpcPort port;

    @Autowired
    PegaEngine engine;

    @Autowired
    TransferEngine owner;

    /** The server's transport list; the requester uses the same one (a subclass runs the cases over shared memory). */
    @Value("${pega.rdma.transports}")
    String transports;

    @BeforeEach
    void openRequester() {
        if (requester == null) {
            requesterPool = PinnedMemoryPool.create(PoolConfig.of(4L << 20));
            requester = UcxTransferEngine.open(
                    new TransferConfig(List.of("lo"), 2, transports), requesterPool.regions(), NanoClock.SYSTEM);
        }
    }

    @AfterAll
    static void closeRequester() {
        if (requester != null) {
            requester.close();
            requesterPool.close();
            requester = null;
            requesterPool = null;
        }
    }

    EngineGrpc.EngineBlockingStub stub(MockScheduler s) {
        return s.stub().withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    static RdmaHandshakeRequest handshake(String requesterId, byte[] metadata) {
        return RdmaHandshakeRequest.newBuilder()
                .setRequesterId(requesterId)
                .setHandshakeMetadata(ByteString.copyFrom(metadata))
                .build();
    }

    @Test
    void shouldRefuseGarbageMetadataAsInvalidArgument() {
        try (MockScheduler s = MockScheduler.connect(HOST, port.port())) {
            assertThatThrownBy(() -> stub(s).rdmaHandshake(handshake("10.0.0.9:1", new byte[] {1, 2, 3, 4})))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription())
                                .startsWith("RDMA handshake failed: invalid handshake descriptor");
                    });
            assertThatThrownBy(() -> stub(s).rdmaHandshake(
                                    handshake("", requester.localDescriptor().encode())))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
        }
    }

    @Test
    void shouldRefuseAPeerThatDisagreesOnLanesOrNicsNamingBothValues() {
        HandshakeDescriptor ours = requester.localDescriptor();
        HandshakeDescriptor fourLanes = new HandshakeDescriptor(
                ours.fabric(),
                ours.instanceId(),
                Collections.nCopies(4, ours.laneAddresses().get(0)),
                ours.nicCount(),
                ours.regions());
        HandshakeDescriptor twoNics =
                new HandshakeDescriptor(ours.fabric(), ours.instanceId(), ours.laneAddresses(), 2, ours.regions());
        try (MockScheduler s = MockScheduler.connect(HOST, port.port())) {
            assertThatThrownBy(() -> stub(s).rdmaHandshake(handshake("10.0.0.9:1", fourLanes.encode())))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                        assertThat(e.getStatus().getDescription()).contains("qps_per_peer mismatch: local=2, remote=4");
                    });
            assertThatThrownBy(() -> stub(s).rdmaHandshake(handshake("10.0.0.9:1", twoNics.encode())))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                        assertThat(e.getStatus().getDescription()).contains("NIC count mismatch: local=1, remote=2");
                    });
        }
        assertThat(owner.isConnected(new PeerId("10.0.0.9:1"))).isFalse();
    }

    @Test
    void shouldConnectBothWaysAndServeLockedBlocksByteExact() throws Exception {
        String me = "127.0.0.1:40001";
        PeerId ownerId = new PeerId(HOST + ":" + port.port());
        BlockPattern pattern = BlockPattern.perByte(41);
        List<ByteString> hashes = BlockPattern.hashes(41, 4);
        try (MockScheduler s = MockScheduler.connect(HOST, port.port());
                MockVllmWorker w = MockVllmWorker.builder(HOST, port.port())
                        .instanceId("p2p-owner")
                        .namespace(NAMESPACE)
                        .layer("layer_0", KvLayout.kvFirst(4, 16, 2, 64, 2))
                        .layer("layer_1", KvLayout.kvFirst(4, 16, 2, 64, 2))
                        .build()) {
            w.register();
            w.fillBlocks(blockIds(4), pattern);
            w.save(blockIds(4), hashes);
            engine.flushSeals();

            RdmaHandshakeResponse hs = stub(s).rdmaHandshake(
                            handshake(me, requester.localDescriptor().encode()));
            requester
                    .connect(
                            ownerId,
                            HandshakeDescriptor.decode(hs.getHandshakeMetadata().toByteArray()),
                            10_000_000_000L)
                    .get(20, TimeUnit.SECONDS);
            assertThat(owner.isConnected(new PeerId(me)))
                    .as("the owner connected back")
                    .isTrue();
            // the legacy probe answers with the owner's descriptor once connected
            assertThat(stub(s).rdmaHandshake(handshake(me, new byte[0])).getHandshakeMetadata())
                    .isEqualTo(hs.getHandshakeMetadata());

            QueryBlocksForTransferResponse grant = stub(s).queryBlocksForTransfer(
                            QueryBlocksForTransferRequest.newBuilder()
                                    .setNamespace(NAMESPACE)
                                    .addAllBlockHashes(hashes)
                                    .addBlockHashes(ByteString.copyFromUtf8("not-saved"))
                                    .setRequesterId(me)
                                    .build());
            assertThat(grant.getBlocksCount()).as("misses skipped").isEqualTo(4);
            assertThat(grant.getLockTimeoutSecs()).isEqualTo(3);
            assertThat(grant.getTransferSessionId()).hasSize(36);

            long total = 0;
            for (TransferBlockInfo b : grant.getBlocksList()) {
                assertThat(b.getSlotsCount()).isEqualTo(2);
                for (TransferSlotInfo slot : b.getSlotsList()) {
                    assertThat(slot.getVSize()).as("split K/V layout").isEqualTo(slot.getKSize());
                    assertThat(slot.getNumaNode()).isEqualTo(0xFFFFFFFF);
                    total += slot.getKSize() + slot.getVSize();
                }
            }
            PinnedAllocation into = requesterPool.allocate(total);
            try {
                TransferBatch batch = TransferBatch.get(16);
                long at = into.address();
                for (TransferBlockInfo b : grant.getBlocksList()) {
                    for (TransferSlotInfo slot : b.getSlotsList()) {
                        batch.add(at, slot.getKPtr(), slot.getKSize());
                        at += slot.getKSize();
                        batch.add(at, slot.getVPtr(), slot.getVSize());
                        at += slot.getVSize();
                    }
                }
                TransferResult result =
                        requester.submit(ownerId, batch, 10_000_000_000L).get(20, TimeUnit.SECONDS);
                assertThat(result.isComplete()).as(result.toString()).isTrue();
                // owner and requester share this JVM, so the owner's pool can be read where the grant points
                for (int op = 0; op < batch.size(); op++) {
                    int n = (int) batch.lengthBytes(op);
                    byte[] remote = new byte[n];
                    byte[] local = new byte[n];
                    Posix.copyToArray(batch.remoteAddress(op), remote, 0, n);
                    Posix.copyToArray(batch.localAddress(op), local, 0, n);
                    assertThat(local).as("operation %d", op).isEqualTo(remote);
                }
            } finally {
                into.release();
            }
            assertThat(stub(s).releaseTransferLock(release(grant)).getReleasedBlocks())
                    .isEqualTo(4);
            assertThat(stub(s).releaseTransferLock(release(grant)).getReleasedBlocks())
                    .as("a second release")
                    .isZero();
            w.unregister();
        } finally {
            requester.disconnect(ownerId).get(10, TimeUnit.SECONDS);
            owner.disconnect(new PeerId(me)).get(10, TimeUnit.SECONDS);
        }
        assertNothingOutstanding();
    }

    @Test
    void shouldExpireAnUnreleasedLockAndMakeItsBlocksEvictableAgain() {
        List<ByteString> hashes = BlockPattern.hashes(42, 2);
        try (MockScheduler s = MockScheduler.connect(HOST, port.port());
                MockVllmWorker w = MockVllmWorker.builder(HOST, port.port())
                        .instanceId("p2p-expiry")
                        .namespace(NAMESPACE)
                        .layer("layer_0", KvLayout.contiguous(2, 4096))
                        .build()) {
            w.register();
            w.fillBlocks(blockIds(2), BlockPattern.perByte(42));
            w.save(blockIds(2), hashes);
            engine.flushSeals();
            QueryBlocksForTransferResponse grant = stub(s).queryBlocksForTransfer(
                            QueryBlocksForTransferRequest.newBuilder()
                                    .setNamespace(NAMESPACE)
                                    .addAllBlockHashes(hashes)
                                    .setRequesterId("127.0.0.1:40002")
                                    .build());
            assertThat(grant.getBlocksCount()).isEqualTo(2);
            // the maintenance sweep leaves a live lock alone (the operator's cleanup would break it)
            engine.runMaintenance();
            assertThat(engine.transferLockStats().sessions()).isEqualTo(1);
            await().atMost(WAIT).untilAsserted(() -> {
                engine.runMaintenance();
                assertThat(engine.transferLockStats().sessions()).isZero();
            });
            assertThat(engine.transferLockStats().expired()).isGreaterThanOrEqualTo(1);
            assertThat(stub(s).releaseTransferLock(release(grant)).getReleasedBlocks())
                    .as("a release after expiry")
                    .isZero();
            w.unregister();
        }
        assertNothingOutstanding();
    }

    @Test
    void shouldEndTheLocksOfARequesterThatHandshakesAsANewIncarnation() throws Exception {
        String me = "127.0.0.1:40003";
        List<ByteString> hashes = BlockPattern.hashes(43, 1);
        HandshakeDescriptor first = requester.localDescriptor();
        HandshakeDescriptor restarted = new HandshakeDescriptor(
                first.fabric(), first.instanceId() + 1, first.laneAddresses(), first.nicCount(), first.regions());
        try (MockScheduler s = MockScheduler.connect(HOST, port.port());
                MockVllmWorker w = MockVllmWorker.builder(HOST, port.port())
                        .instanceId("p2p-incarnation")
                        .namespace(NAMESPACE)
                        .layer("layer_0", KvLayout.contiguous(1, 4096))
                        .build()) {
            w.register();
            w.fillBlocks(blockIds(1), BlockPattern.perByte(43));
            w.save(blockIds(1), hashes);
            engine.flushSeals();
            stub(s).rdmaHandshake(handshake(me, first.encode()));
            QueryBlocksForTransferResponse grant = stub(s).queryBlocksForTransfer(
                            QueryBlocksForTransferRequest.newBuilder()
                                    .setNamespace(NAMESPACE)
                                    .addAllBlockHashes(hashes)
                                    .setRequesterId(me)
                                    .build());
            assertThat(grant.getBlocksCount()).isEqualTo(1);
            long droppedBefore = engine.transferLockStats().droppedByRequester();
            // the holder "died" and came back: the same address, a new instance id
            stub(s).rdmaHandshake(handshake(me, restarted.encode()));
            assertThat(engine.transferLockStats().droppedByRequester()).isEqualTo(droppedBefore + 1);
            assertThat(stub(s).releaseTransferLock(release(grant)).getReleasedBlocks())
                    .isZero();
            w.unregister();
        } finally {
            owner.disconnect(new PeerId(me)).get(10, TimeUnit.SECONDS);
        }
        assertNothingOutstanding();
    }

    static ReleaseTransferLockRequest release(QueryBlocksForTransferResponse grant) {
        return ReleaseTransferLockRequest.newBuilder()
                .setTransferSessionId(grant.getTransferSessionId())
                .build();
    }

    void assertNothingOutstanding() {
        engine.cleanupInstances(null);
        engine.flushSeals();
        engine.cleanupMemory();
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(engine.transferLockStats().sessions())
                    .as("lock sessions")
                    .isZero();
            assertThat(engine.pool().outstandingAllocations())
                    .as("pool allocations")
                    .isZero();
        });
    }
}
