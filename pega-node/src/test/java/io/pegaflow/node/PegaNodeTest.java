package io.pegaflow.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.device.host.HostDeviceBackend;
import io.pegaflow.core.engine.EngineConfig;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.node.remote.PeerBlocks;
import io.pegaflow.node.remote.RemoteConfig;
import io.pegaflow.node.remote.RemoteFetchTier;
import io.pegaflow.push.PushConfig;
import io.pegaflow.push.grpc.GrpcDecodeLink;
import io.pegaflow.push.grpc.PushWire;
import io.pegaflow.push.layout.HandshakeSeal;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferKeys;
import io.pegaflow.transfer.ucx.UcxSharedMemory;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The node as pega-server runs it, without Spring, over real UCX contexts on loopback: which context allocates the
 * pool, which engines run on it, that one close releases everything in order, and that a launch that fails half way
 * leaves nothing running.
 */
@Timeout(120)
class PegaNodeTest {
    private static final TransferKeys PD =
            new TransferKeys("pega.pd.enabled", "pega.pd.nics", "pega.pd.lanes", "pega.pd.transports");
    private static final long POOL = 8L << 20;

    private static NodeContext hostNode() {
        return new NodeContext()
                .engine(EngineConfig.defaults(PoolConfig.of(POOL)))
                .backend(regions -> new HostDeviceBackend());
    }

    private static NodeContext.Ucx p2p(String transports) {
        return new NodeContext.Ucx(TransferConfig.of("lo", 2).withTransports(transports), TransferKeys.RDMA, true);
    }

    private static NodeContext.Push push(String nics, String transports) {
        return new NodeContext.Push(
                new NodeContext.Ucx(TransferConfig.of(nics, 2, transports, PD), PD, true),
                PushConfig.defaults(),
                HandshakeSeal.none(),
                new PushWire(),
                new GrpcDecodeLink(Duration.ofSeconds(5)),
                () -> "127.0.0.1:1");
    }

    @Test
    void shouldRunTheEngineAloneWithoutUcx() {
        try (PegaNode node = PegaNode.launch(hostNode())) {
            assertThat(node.engine().metrics()).isNotNull();
            assertThat(node.transfers()).isEmpty();
            assertThat(node.push()).isEmpty();
            assertThat(node.poolMemory()).as("the pool maps its own memory").isEmpty();
        }
    }

    @Test
    void shouldRunThePushOnTheP2pContextWhenTheTransportsAreTheSame() {
        UcxSharedMemory context;
        try (PegaNode node = PegaNode.launch(hostNode().p2p(p2p("shm,self")).push(push("lo", "shm,self")))) {
            context = node.poolMemory().orElseThrow();
            int shards = node.engine().pool().regions().size();
            assertThat(context.sharedOutstanding()).isEqualTo(shards);
            assertThat(context.borrowers()).as("the P2P and the push engine").isEqualTo(2);
        }
        // one close: both engines gave the context back and the pool returned its shards before it closed
        assertThat(context.borrowers()).isZero();
        assertThat(context.outstanding()).isZero();
    }

    @Test
    void shouldGiveThePushAContextOfItsOwnWhenTheTransportsDiffer() {
        try (PegaNode node = PegaNode.launch(hostNode().p2p(p2p("shm,self")).push(push("lo", "tcp")))) {
            assertThat(node.poolMemory().orElseThrow().borrowers())
                    .as("only the P2P engine")
                    .isEqualTo(1);
            assertThat(node.push()).isPresent();
        }
    }

    @Test
    void shouldLetThePushContextAllocateThePoolWithoutP2p() {
        try (PegaNode node = PegaNode.launch(hostNode().push(push("lo", "shm,self")))) {
            UcxSharedMemory context = node.poolMemory().orElseThrow();
            assertThat(context.outstanding())
                    .isEqualTo(node.engine().pool().regions().size());
            assertThat(context.borrowers()).isEqualTo(1);
            assertThat(node.transfers()).isEmpty();
        }
    }

    /** A peer port that counts its closes and reaches no peer. */
    static final class CountingPeers implements PeerBlocks {
        final AtomicInteger closes = new AtomicInteger();

        @Override
        public byte[] handshake(PeerId peer, String requesterId, byte[] descriptor, long timeoutNanos) {
            throw new IllegalStateException("no peer here");
        }

        @Override
        public Grant lock(
                PeerId peer,
                String namespace,
                List<byte[]> hashes,
                String requesterId,
                boolean checksums,
                long timeoutNanos) {
            throw new IllegalStateException("no peer here");
        }

        @Override
        public void release(PeerId peer, String session, long timeoutNanos) {}

        @Override
        public void close() {
            closes.incrementAndGet();
        }
    }

    private static NodeContext.Remote remote(PeerBlocks peers) {
        return new NodeContext.Remote(
                new RemoteConfig(Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1), 16, true),
                (namespace, hashes) -> List.of(),
                peers,
                "127.0.0.1:1",
                peer -> {});
    }

    @Test
    void shouldCloseTheRemoteTierOnceBeforeTheTransferEngine() throws Exception {
        CountingPeers peers = new CountingPeers();
        PegaNode node = PegaNode.launch(hostNode().p2p(p2p("tcp")).remote(remote(peers)));
        RemoteFetchTier tier = node.remoteTier().orElseThrow();
        assertThat(node.engine().tierNames()).containsExactly(RemoteFetchTier.NAME);
        node.close();
        node.close(); // idempotent: nothing closes twice through the node
        assertThat(peers.closes.get())
                .as("one owner, one close: the node closes the tier, the engine only borrowed it")
                .isEqualTo(1);
        assertThat(tier.fetchPrefix(List.of(new BlockKey("ns", new byte[] {1})), bytes -> null)
                        .get(5, TimeUnit.SECONDS))
                .as("a closed tier fetches nothing")
                .isEmpty();
    }

    @Test
    void shouldCloseWhatItBuiltWhenALaterStepFails() {
        CountingPeers peers = new CountingPeers();
        NodeContext ctx = hostNode().p2p(p2p("tcp")).remote(remote(peers)).push(push("pega-no-such-nic0", "tcp"));
        assertThatThrownBy(() -> PegaNode.launch(ctx))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("pega.pd.nics");
        assertThat(peers.closes.get())
                .as("the engine and its tiers were closed")
                .isEqualTo(1);
        // and the node can be built again at once: no port, segment or context was left behind
        try (PegaNode again = PegaNode.launch(hostNode().p2p(p2p("tcp")))) {
            assertThat(again.transfers()).isPresent();
        }
    }

    @Test
    void shouldCloseThePeerPortWhenTheLaunchFailsBeforeTheTierExists() {
        CountingPeers peers = new CountingPeers();
        NodeContext ctx = hostNode()
                .p2p(new NodeContext.Ucx(
                        TransferConfig.of("pega-no-such-nic0", 2, "tcp", TransferKeys.RDMA), TransferKeys.RDMA, true))
                .remote(remote(peers));
        assertThatThrownBy(() -> PegaNode.launch(ctx))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("pega.rdma.nics");
        assertThat(peers.closes.get()).as("the node took it over at launch").isEqualTo(1);
    }

    @Test
    void shouldLendTheEngineEveryMethodOfTheTierButClose() {
        // a method BackingTier gains must be forwarded, or the engine would see the default instead of the tier's
        for (Method m : BackingTier.class.getMethods()) {
            if (!Modifier.isStatic(m.getModifiers())) {
                assertThatCode(() -> LentTier.class.getDeclaredMethod(m.getName(), m.getParameterTypes()))
                        .as("LentTier overrides %s", m.getName())
                        .doesNotThrowAnyException();
            }
        }
    }

    @Test
    void shouldRefuseAnIncompleteContext() {
        assertThatThrownBy(() -> PegaNode.launch(new NodeContext()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("engine");
        assertThatThrownBy(() -> PegaNode.launch(hostNode().remote(remote(new CountingPeers()))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("P2P");
    }
}
