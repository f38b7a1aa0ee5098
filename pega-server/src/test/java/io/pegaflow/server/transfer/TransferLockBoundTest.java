package io.pegaflow.server.transfer;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.InsecureChannelCredentials;
import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.edge.access.ClusterCredential;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.node.remote.RemoteConfig;
import io.pegaflow.node.remote.RemoteFetchStats;
import io.pegaflow.node.remote.RemoteFetchTier;
import io.pegaflow.server.config.EngineCustomizer;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.server.internode.GrpcPeerBlocks;
import io.pegaflow.sys.Posix;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.TransferBatch;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferResult;
import io.pegaflow.transfer.TransferView;
import io.pegaflow.transfer.ucx.UcxTransferEngine;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;

/**
 * A remote fetch's gets against the owner's transfer lock (decision 0017): a real owner server whose engine, and so
 * whose lock table, runs on a clock the test moves, and a requester tier in this JVM on the same clock, whose gets the
 * test holds back in flight. The requester's own settings are the defaults (a 120 s lock, 60 s for the gets), the
 * owner's lock is 3 s: only the owner's answer can tell the requester how long it has.
 *
 * <p>A lock that expires while the get is held ends, the owner evicts the blocks and reuses their memory for other
 * blocks, then the get runs and reads that memory: the requester must serve none of it. A get that ends inside the
 * lock serves the owner's bytes exactly. Before the fix the requester waited its own 60 s (plus the completion grace)
 * and served whatever the get read.
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
class TransferLockBoundTest {
    static final String HOST = "127.0.0.1";
    static final String NAMESPACE = "ns-lock-bound";
    static final Duration WAIT = Duration.ofSeconds(20);
    static final KvLayout LAYOUT = KvLayout.kvFirst(4, 16, 2, 64, 2);
    static final int BLOCKS = 4;

    /** The owner's engine (its lock table) and the requester's tier read this one clock. */
    static final ManualClock CLOCK = new ManualClock();

    static PinnedMemoryPool requesterPool;
    static TransferEngine requesterEngine;

    @Autowired
    GrpcPort port;

    @Autowired
    PegaEngine owner;

    HeldGets gets;
    RemoteFetchTier tier;

    static final class ManualClock implements NanoClock {
        private final AtomicLong now = new AtomicLong(1_000_000_000L);

        @Override
        public long nanoTime() {
            return now.get();
        }

        void advance(Duration d) {
            now.addAndGet(d.toNanos());
        }
    }

    @TestConfiguration
    static class OwnerOnTheTestClock {
        @Bean
        EngineCustomizer testClock() {
            return context -> context.clock(CLOCK);
        }
    }

    /** The requester's real engine, whose first submit waits in flight until the test lets it go. */
    static final class HeldGets implements TransferEngine {
        final TransferEngine inner;
        final CountDownLatch reached = new CountDownLatch(1);
        final CountDownLatch go = new CountDownLatch(1);
        volatile long timeoutNanos = -1;

        HeldGets(TransferEngine inner) {
            this.inner = inner;
        }

        @Override
        public CompletableFuture<TransferResult> submit(PeerId peer, TransferBatch batch, long timeoutNanos) {
            this.timeoutNanos = timeoutNanos;
            reached.countDown();
            try {
                if (!go.await(60, TimeUnit.SECONDS)) {
                    throw new AssertionError("the test never let the get go");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            return inner.submit(peer, batch, timeoutNanos);
        }

        @Override
        public HandshakeDescriptor localDescriptor() {
            return inner.localDescriptor();
        }

        @Override
        public int lanes() {
            return inner.lanes();
        }

        @Override
        public CompletableFuture<Void> connect(PeerId peer, HandshakeDescriptor remote, long timeoutNanos) {
            return inner.connect(peer, remote, timeoutNanos);
        }

        @Override
        public boolean isConnected(PeerId peer) {
            return inner.isConnected(peer);
        }

        @Override
        public CompletableFuture<Void> disconnect(PeerId peer) {
            return inner.disconnect(peer);
        }

        @Override
        public TransferView view() {
            return inner.view();
        }

        @Override
        public void close() {
            // the static engine outlives each test's tier
        }
    }

    @BeforeAll
    static void openRequester() {
        requesterPool = PinnedMemoryPool.create(PoolConfig.of(4L << 20));
        requesterEngine = UcxTransferEngine.open(
                new TransferConfig(List.of("lo"), 2, "tcp"), requesterPool.regions(), NanoClock.SYSTEM);
    }

    @AfterAll
    static void closeRequester() {
        requesterEngine.close();
        requesterPool.close();
    }

    @BeforeEach
    void newTier() {
        gets = new HeldGets(requesterEngine);
        String ownerAddress = HOST + ":" + port.port();
        // the requester's own settings: the defaults, which alone would let its gets run for 60 s
        RemoteConfig requesterSettings = new RdmaProperties(
                        true,
                        "lo",
                        "tcp",
                        2,
                        Duration.ofSeconds(120),
                        null,
                        Duration.ofSeconds(10),
                        Duration.ofSeconds(5),
                        4096,
                        true,
                        0.25,
                        0.5,
                        true)
                .remoteConfig();
        tier = new RemoteFetchTier(
                (namespace, hashes) -> List.of(new RemoteFetchTier.Owner(ownerAddress, hashes.size())),
                gets,
                HOST + ":40111",
                requesterSettings,
                CLOCK,
                new GrpcPeerBlocks(
                        InsecureChannelCredentials.create(),
                        ClusterCredential.of("").attach()),
                peer -> {});
    }

    @AfterEach
    void nothingOutstanding() {
        gets.go.countDown();
        tier.close();
        owner.cleanupInstances(null);
        owner.flushSeals();
        await().atMost(WAIT).untilAsserted(() -> {
            owner.cleanupMemory();
            owner.runMaintenance();
            assertThat(owner.transferLockStats().sessions())
                    .as("lock sessions on the owner")
                    .isZero();
            assertThat(owner.pool().outstandingAllocations())
                    .as("owner allocations")
                    .isZero();
            assertThat(requesterPool.outstandingAllocations())
                    .as("requester allocations")
                    .isZero();
        });
    }

    MockVllmWorker ownerWorker(String instance) {
        MockVllmWorker w = MockVllmWorker.builder(HOST, port.port())
                .instanceId(instance)
                .namespace(NAMESPACE)
                .layer("layer_0", LAYOUT)
                .layer("layer_1", LAYOUT)
                .build();
        w.register();
        return w;
    }

    void save(MockVllmWorker w, List<ByteString> hashes, BlockPattern pattern) {
        w.fillBlocks(blockIds(BLOCKS), pattern);
        w.save(blockIds(BLOCKS), hashes);
        owner.flushSeals();
    }

    static List<BlockKey> keys(List<ByteString> hashes) {
        List<BlockKey> out = new ArrayList<>();
        for (ByteString h : hashes) {
            out.add(new BlockKey(NAMESPACE, h.toByteArray()));
        }
        return out;
    }

    static byte[] bytesOf(SealedBlock block) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int s = 0; s < block.slotCount(); s++) {
            SlotData slot = block.slot(s);
            assertThat(slot).isNotNull();
            for (int g = 0; g < slot.segments(); g++) {
                byte[] b = new byte[(int) slot.length(g)];
                Posix.copyToArray(slot.address(g), b, 0, b.length);
                out.writeBytes(b);
            }
        }
        return out.toByteArray();
    }

    /** What the owner holds for {@code keys}, in order, read out of its pool. */
    List<byte[]> ownerBytes(List<BlockKey> keys) {
        List<byte[]> out = new ArrayList<>();
        owner.cache().lookupEach(keys, (k, b) -> {
            try {
                out.add(bytesOf(b));
            } finally {
                b.release();
            }
        });
        return out;
    }

    CompletableFuture<List<SealedBlock>> fetchAndHoldTheGets(List<BlockKey> keys) throws InterruptedException {
        CompletableFuture<List<SealedBlock>> fetch = tier.fetchPrefix(keys, requesterPool::allocate);
        assertThat(gets.reached.await(WAIT.toSeconds(), TimeUnit.SECONDS))
                .as("the fetch reached its gets (handshake and lock done)")
                .isTrue();
        assertThat(owner.transferLockStats().sessions())
                .as("the owner's lock is held")
                .isEqualTo(1);
        assertThat(gets.timeoutNanos)
                .as("the gets' timeout: what is left of the owner's 3 s lock, not the requester's own 60 s")
                .isPositive()
                .isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(3));
        return fetch;
    }

    @Test
    void shouldServeNothingOfAGetThatRanAfterTheOwnersLockExpired() throws Exception {
        List<ByteString> hashes = BlockPattern.hashes(17_001, BLOCKS);
        List<ByteString> others = BlockPattern.hashes(17_002, BLOCKS);
        RemoteFetchStats stats = tier.stats();
        long expiredBefore = owner.transferLockStats().expired();
        try (MockVllmWorker w = ownerWorker("lock-bound-owner")) {
            save(w, hashes, BlockPattern.perByte(17_001));
            CompletableFuture<List<SealedBlock>> fetch = fetchAndHoldTheGets(keys(hashes));

            // The get is still in flight when the owner's lock runs out: the session ends, its references go.
            CLOCK.advance(Duration.ofSeconds(3));
            owner.runMaintenance();
            assertThat(owner.transferLockStats().sessions()).isZero();
            assertThat(owner.transferLockStats().expired()).isEqualTo(expiredBefore + 1);
            // Evicted, the blocks' memory is free, and other blocks take it.
            owner.cleanupMemory();
            assertThat(owner.pool().outstandingAllocations())
                    .as("the locked blocks' memory is free on the owner")
                    .isZero();
            save(w, others, BlockPattern.perByte(17_002));

            gets.go.countDown();
            List<SealedBlock> got = fetch.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            try {
                assertThat(got)
                        .as("blocks served from gets that read the owner's memory after its lock ended")
                        .isEmpty();
            } finally {
                got.forEach(SealedBlock::release);
            }
            assertThat(stats.failures(RemoteFetchStats.Failure.LOCK_EXPIRED)).isEqualTo(1);
            assertThat(stats.failures(RemoteFetchStats.Failure.TRANSFER)).isZero();
            assertThat(stats.blocksFetched()).isZero();
            w.unregister();
        }
    }

    @Test
    void shouldServeTheOwnersBytesExactlyFromAGetThatEndsWhileTheLockHolds() throws Exception {
        List<ByteString> hashes = BlockPattern.hashes(17_011, BLOCKS);
        RemoteFetchStats stats = tier.stats();
        try (MockVllmWorker w = ownerWorker("lock-bound-owner-2")) {
            save(w, hashes, BlockPattern.perByte(17_011));
            List<byte[]> expected = ownerBytes(keys(hashes));
            assertThat(expected).hasSize(BLOCKS);
            CompletableFuture<List<SealedBlock>> fetch = fetchAndHoldTheGets(keys(hashes));

            // a second of the lock's three passes while the get is held: the lock still holds the blocks
            CLOCK.advance(Duration.ofSeconds(1));
            owner.runMaintenance();
            assertThat(owner.transferLockStats().sessions()).isEqualTo(1);

            gets.go.countDown();
            List<SealedBlock> got = fetch.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            try {
                assertThat(got).hasSize(BLOCKS);
                for (int i = 0; i < BLOCKS; i++) {
                    assertThat(bytesOf(got.get(i))).as("block %d", i).isEqualTo(expected.get(i));
                }
            } finally {
                got.forEach(SealedBlock::release);
            }
            assertThat(stats.failures(RemoteFetchStats.Failure.LOCK_EXPIRED)).isZero();
            assertThat(stats.succeeded()).isEqualTo(1);
            w.unregister();
        }
    }
}
