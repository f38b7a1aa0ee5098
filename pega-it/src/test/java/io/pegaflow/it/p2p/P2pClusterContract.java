package io.pegaflow.it.p2p;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.jayway.jsonpath.JsonPath;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.it.net.Site;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.proto.HealthResponse;
import io.pegaflow.proto.QueryBlocksForTransferRequest;
import io.pegaflow.proto.QueryBlocksForTransferResponse;
import io.pegaflow.proto.RdmaHandshakeRequest;
import io.pegaflow.proto.ReleaseTransferLockRequest;
import io.pegaflow.proto.ReleaseTransferLockResponse;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ReferenceHarness;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.RegisteredRegion;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two pega-servers with the transfer engine on (UCX over TCP on their site's device) and a metaserver, at two sites,
 * run once per kind of site: both nodes register with the metaserver under their own addresses and reach each other's
 * gRPC port; node a's P2P RPCs, called from node b's site, refuse a peer that disagrees on the connections per peer
 * and garbage metadata, and let a transfer lock nobody releases expire and give its blocks back. One set of processes
 * per class (they take most of the time on a 2-core CI machine).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
abstract class P2pClusterContract implements RemotePrefetchCases {
    static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path dir;

    TwoNodeCluster cluster;

    /** The two sites, or a JUnit assumption failure saying why this machine cannot make them. */
    abstract List<Site> sites() throws IOException;

    /** Called after every process has stopped. */
    void afterCluster() {}

    /** Connections per peer on both nodes. */
    static final int QPS_PER_PEER = 2;
    /** Short, so that the expiry of a lock nobody releases can be waited for. */
    static final int LOCK_TIMEOUT_SECONDS = 6;

    static final String NAMESPACE = "p2p-it";
    static final KvLayout LAYOUT = KvLayout.contiguous(16, 16 * 1024);
    static final List<String> LAYERS = List.of("layer_0", "layer_1");

    /**
     * What every server gets beside {@link TwoNodeCluster}'s arguments: the transfer engine over UCX TCP on its
     * site's device, the short lock timeout (and a transfer timeout shorter still, as the keys require), and the
     * admin token that the cleanup endpoint needs on a listener not bound to loopback; and the transfer engine's
     * startup line, which says how the pool is mapped.
     */
    static List<String> serverArgs(Site site) {
        return List.of(
                "--pega.pool.size=96MB",
                "--pega.rdma.enabled=true",
                "--pega.rdma.nics=" + site.device(),
                "--pega.rdma.transports=tcp",
                "--pega.rdma.qps-per-peer=" + QPS_PER_PEER,
                "--pega.rdma.transfer-lock-timeout=" + LOCK_TIMEOUT_SECONDS + "s",
                "--pega.rdma.transfer-timeout=4s",
                "--pega.admin.token=" + NodeHttp.ADMIN_TOKEN,
                "--logging.level.io.pegaflow.server.transfer.RdmaConfiguration=INFO");
    }

    @BeforeAll
    void startCluster() throws IOException {
        List<Site> sites = sites();
        cluster = TwoNodeCluster.start(dir, sites.get(0), sites.get(1), P2pClusterContract::serverArgs);
    }

    @Override
    public TwoNodeCluster cluster() {
        return cluster;
    }

    @AfterAll
    void stopCluster() {
        try {
            if (cluster != null) {
                cluster.close();
            }
        } finally {
            afterCluster();
        }
    }

    static ManagedChannel channel(int localPort) {
        return ManagedChannelBuilder.forAddress("127.0.0.1", localPort)
                .usePlaintext()
                .build();
    }

    static HealthResponse health(ManagedChannel channel) {
        return EngineGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .health(HealthRequest.getDefaultInstance());
    }

    private boolean bothLive() {
        String json = cluster.metaserverNodesJson();
        if (json == null || !json.contains("\"nodes\"")) {
            return false;
        }
        List<String> live = JsonPath.read(json, "$.nodes[?(@.state == 'live')].node");
        return live.contains(cluster.a().advertised())
                && live.contains(cluster.b().advertised());
    }

    @Test
    void shouldRegisterEachNodeWithTheMetaserverUnderItsOwnAddress() {
        try {
            await().atMost(WAIT).until(this::bothLive);
        } catch (RuntimeException | AssertionError e) {
            throw new AssertionError(
                    "both nodes live in /api/nodes: " + cluster.metaserverNodesJson() + cluster.logs(), e);
        }
        assertThat(cluster.a().advertised()).isNotEqualTo(cluster.b().advertised());
    }

    /**
     * Over UCX TCP alone no peer can attach shared memory, so the pool keeps its own mapping (decision 0019) and
     * nothing warns about private memory.
     */
    @Test
    void shouldKeepThePoolsOwnMappingWhenOnlyNetworkTransportsAreAllowed() {
        for (TwoNodeCluster.Node node : List.of(cluster.a(), cluster.b())) {
            assertThat(node.process().logText())
                    .as("%s's log", node.name())
                    .contains("pool mapped privately")
                    .doesNotContain("UCX_ALLOCATED")
                    .doesNotContain("private memory, not shared memory");
        }
    }

    @Test
    void shouldReachTheOtherNodesGrpcPortFromEachSite() throws IOException {
        TwoNodeCluster.Node a = cluster.a();
        TwoNodeCluster.Node b = cluster.b();
        ManagedChannel fromB = channel(b.site().dial(a.site().address(), a.grpcPort()));
        ManagedChannel fromA = channel(a.site().dial(b.site().address(), b.grpcPort()));
        try {
            assertThat(health(fromB).getStatus().getOk()).isTrue();
            assertThat(health(fromA).getStatus().getOk()).isTrue();
        } finally {
            fromB.shutdownNow();
            fromA.shutdownNow();
        }
    }

    /** A worker of node a, over the host backend, its layers registered. */
    MockVllmWorker workerOfA(String instanceId) throws IOException {
        TwoNodeCluster.Node a = cluster.a();
        MockVllmWorker worker = MockVllmWorker.builder("127.0.0.1", a.localGrpc())
                .instanceId(instanceId)
                .namespace(NAMESPACE)
                .sharedLayers(LAYERS, LAYOUT)
                .build();
        worker.register();
        return worker;
    }

    /** A client whose connection to node a is dialled from node b's site (across the veth where there is one). */
    EngineGrpc.EngineBlockingStub peerOfAFromB(List<ManagedChannel> channels) throws IOException {
        TwoNodeCluster.Node a = cluster.a();
        ManagedChannel channel = channel(cluster.b().site().dial(a.site().address(), a.grpcPort()));
        channels.add(channel);
        return EngineGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    /** A well-formed UCX descriptor whose only fault is its lane count; never connected to, so its blobs are inert. */
    private static HandshakeDescriptor descriptorWithLanes(int lanes) {
        List<byte[]> addresses = new ArrayList<>();
        for (int i = 0; i < lanes; i++) {
            addresses.add(new byte[] {1, 2, 3, (byte) i});
        }
        return new HandshakeDescriptor(
                HandshakeDescriptor.Fabric.UCX,
                0x5EED_0000_0000_0001L,
                addresses,
                1,
                List.of(new RegisteredRegion(1L << 40, 1L << 20, new byte[] {9, 9, 9, 9})));
    }

    @Test
    void shouldRefuseAPeerThatDisagreesOnTheConnectionsPerPeerNamingBothValues() throws IOException {
        List<ManagedChannel> channels = new ArrayList<>();
        try {
            EngineGrpc.EngineBlockingStub peer = peerOfAFromB(channels);
            RdmaHandshakeRequest request = RdmaHandshakeRequest.newBuilder()
                    .setRequesterId(cluster.b().site().address() + ":1")
                    .setHandshakeMetadata(ByteString.copyFrom(
                            descriptorWithLanes(QPS_PER_PEER + 1).encode()))
                    .build();
            assertThatThrownBy(() -> peer.rdmaHandshake(request))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                        assertThat(e.getStatus().getDescription())
                                .contains("qps_per_peer mismatch")
                                .contains("local=" + QPS_PER_PEER)
                                .contains("remote=" + (QPS_PER_PEER + 1));
                    });
            // Garbage where a descriptor belongs is the caller's fault, not a peer that disagrees.
            RdmaHandshakeRequest garbage = request.toBuilder()
                    .setHandshakeMetadata(ByteString.copyFromUtf8("not a descriptor at all"))
                    .build();
            assertThatThrownBy(() -> peerOfAFromB(channels).rdmaHandshake(garbage))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).contains("invalid handshake descriptor");
                    });
            assertThat(health(channels.get(0)).getStatus().getOk()).isTrue();
        } finally {
            channels.forEach(ManagedChannel::shutdownNow);
        }
    }

    private double outstandingAllocationsOfA() {
        return NodeHttp.metric(cluster.a(), "pegaflow_pool_outstanding_allocations")
                .orElse(-1);
    }

    @Test
    void shouldExpireATransferLockNobodyReleasesAndGiveItsBlocksBack() throws Exception {
        List<ManagedChannel> channels = new ArrayList<>();
        List<ByteString> hashes = BlockPattern.hashes(14_001, 4);
        try (MockScheduler scheduler =
                        MockScheduler.connect("127.0.0.1", cluster.a().localGrpc());
                MockVllmWorker worker = workerOfA("lock-expiry-worker")) {
            worker.fillBlocks(ReferenceHarness.blockIds(4), BlockPattern.perByte(14_001));
            worker.save(ReferenceHarness.blockIds(4), hashes);
            scheduler.awaitSealed(worker.instanceId(), hashes, WAIT);

            // A peer locks the blocks, then never releases (as a requester that hangs or dies would).
            QueryBlocksForTransferResponse lock = peerOfAFromB(channels)
                    .queryBlocksForTransfer(QueryBlocksForTransferRequest.newBuilder()
                            .setNamespace(NAMESPACE)
                            .addAllBlockHashes(hashes)
                            .setRequesterId("lock-holder-that-vanishes:1")
                            .build());
            assertThat(lock.getBlocksCount()).isEqualTo(4);
            assertThat(lock.getLockTimeoutSecs()).isEqualTo(LOCK_TIMEOUT_SECONDS);

            // The lock expires on its own, and a release after expiry finds nothing to release.
            try {
                await().atMost(Duration.ofSeconds(LOCK_TIMEOUT_SECONDS).plus(WAIT))
                        .until(() -> NodeHttp.metric(cluster.a(), "pegaflow_transfer_lock_sessions")
                                        .orElse(-1)
                                == 0);
            } catch (RuntimeException | AssertionError e) {
                throw new AssertionError("lock sessions of a still open" + cluster.logs(), e);
            }
            ReleaseTransferLockResponse late = peerOfAFromB(channels)
                    .releaseTransferLock(ReleaseTransferLockRequest.newBuilder()
                            .setTransferSessionId(lock.getTransferSessionId())
                            .build());
            assertThat(late.getReleasedBlocks()).isZero();

            // A second lock is broken by the operator's cleanup, which then gives every allocation back.
            assertThat(peerOfAFromB(channels)
                            .queryBlocksForTransfer(QueryBlocksForTransferRequest.newBuilder()
                                    .setNamespace(NAMESPACE)
                                    .addAllBlockHashes(hashes)
                                    .setRequesterId("lock-holder-that-vanishes:1")
                                    .build())
                            .getBlocksCount())
                    .isEqualTo(4);
            String cleanup = NodeHttp.adminPost(cluster.a(), "/cache/memory/cleanup");
            assertThat((Integer) JsonPath.read(cleanup, "$.broken_transfer_locks"))
                    .isEqualTo(1);
            try {
                await().atMost(WAIT).until(() -> outstandingAllocationsOfA() == 0);
            } catch (RuntimeException | AssertionError e) {
                throw new AssertionError(
                        "allocations of a still outstanding: " + outstandingAllocationsOfA() + cluster.logs(), e);
            }
            worker.unregister();
        } catch (StatusRuntimeException e) {
            throw new AssertionError(e.getStatus() + cluster.logs(), e);
        } finally {
            channels.forEach(ManagedChannel::shutdownNow);
        }
    }

    /** A gRPC call through {@code localPort} fails as a refused connection does. */
    static void assertUnreachable(int localPort) {
        ManagedChannel channel = channel(localPort);
        try {
            assertThatThrownBy(() -> health(channel))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        } finally {
            channel.shutdownNow();
        }
    }
}
