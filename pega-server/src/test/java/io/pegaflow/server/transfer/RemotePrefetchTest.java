package io.pegaflow.server.transfer;

import static io.pegaflow.server.transfer.RemoteFetchNodes.HOST;
import static io.pegaflow.server.transfer.RemoteFetchNodes.LAYOUT;
import static io.pegaflow.server.transfer.RemoteFetchNodes.freePort;
import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.micrometer.core.instrument.MeterRegistry;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.node.PegaNode;
import io.pegaflow.node.remote.RemoteFetchStats;
import io.pegaflow.node.remote.RemoteFetchTier;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.QueryResponse;
import io.pegaflow.sys.OffHeap;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.ChildJvm;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Remote prefetch between two whole servers in this JVM, over UCX TCP on 127.0.0.1, with an owner-keeping metaserver:
 * node A saves through the host backend; a client of node B queries (Loading, then Ready), loads, and gets A's bytes
 * byte for byte; B is then an owner too and the blocks count as {@code remote}. A prefix A holds only in part gives a
 * shorter prefix; an owner that does not exist (a peer gone) gives a miss. Nothing stays outstanding on either node:
 * no lock session on A, no pool allocation once the caches are cleaned.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RemotePrefetchTest {
    static final String NAMESPACE = "ns-remote";
    static final Duration WAIT = Duration.ofSeconds(30);

    static OwnerIndexMetaServer metaserver;
    static Node a;
    static Node b;

    record Node(ConfigurableApplicationContext context, int port) {
        PegaEngine engine() {
            return context.getBean(PegaEngine.class);
        }

        String address() {
            return HOST + ":" + port;
        }
    }

    static Node start() throws IOException {
        int port = freePort();
        // the peers authenticate each other's transfer RPCs, as a cluster runs them
        return new Node(
                RemoteFetchNodes.start(
                        metaserver, port, List.of("--pega.cluster.token=remote-prefetch-test-cluster-secret")),
                port);
    }

    @BeforeAll
    static void startNodes() throws IOException {
        metaserver = new OwnerIndexMetaServer();
        a = start();
        b = start();
    }

    @AfterAll
    static void stopNodes() {
        if (b != null) {
            b.context().close();
        }
        if (a != null) {
            a.context().close();
        }
        metaserver.close();
    }

    @AfterEach
    void nothingOutstanding() {
        for (Node n : List.of(a, b)) {
            PegaEngine e = n.engine();
            e.cleanupInstances(null);
            e.flushSeals();
            await().atMost(WAIT).untilAsserted(() -> {
                e.cleanupMemory();
                assertThat(e.transferLockStats().sessions())
                        .as("lock sessions on %s", n)
                        .isZero();
                assertThat(e.activeLeases()).as("leases on %s", n).isZero();
                assertThat(e.pool().outstandingAllocations())
                        .as("allocations on %s", n)
                        .isZero();
            });
        }
    }

    static MockVllmWorker worker(Node n, String instance) {
        return MockVllmWorker.builder(HOST, n.port())
                .instanceId(instance)
                .namespace(NAMESPACE)
                .layer("layer_0", LAYOUT)
                .layer("layer_1", LAYOUT)
                .build();
    }

    void saveOnA(MockVllmWorker w, List<ByteString> hashes, BlockPattern pattern) {
        w.register();
        w.fillBlocks(blockIds(hashes.size()), pattern);
        w.save(blockIds(hashes.size()), hashes);
        a.engine().flushSeals();
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(hashes)
                        .allSatisfy(h ->
                                assertThat(metaserver.ownersOf(NAMESPACE, h)).contains(a.address())));
    }

    @Test
    void shouldFetchAPrefixFromTheOwnerByteExactAndBecomeAnOwner() {
        BlockPattern pattern = BlockPattern.perByte(91);
        List<ByteString> hashes = BlockPattern.hashes(91, 8);
        long remoteBefore = b.engine().metrics().tierRequests(RemoteFetchTier.NAME);
        try (MockVllmWorker owner = worker(a, "owner-a");
                MockVllmWorker reader = worker(b, "reader-b");
                MockScheduler scheduler = MockScheduler.connect(HOST, b.port())) {
            saveOnA(owner, hashes, pattern);
            reader.register();
            QueryResponse first = scheduler.query(reader.instanceId(), hashes, "req-1");
            assertThat(first.hasLoading())
                    .as("the first answer while the fetch runs")
                    .isTrue();
            QueryReady ready = scheduler.queryUntilReady(reader.instanceId(), hashes, "req-1", WAIT);
            assertThat(ready.getNumHitBlocks()).isEqualTo(8);
            assertThat(reader.load(ready.getLease(), blockIds(8)).succeeded()).isTrue();
            reader.verifyBlocks(blockIds(8), pattern);
            assertThat(b.engine().metrics().tierRequests(RemoteFetchTier.NAME) - remoteBefore)
                    .isEqualTo(8);
            await().atMost(WAIT)
                    .untilAsserted(() -> assertThat(hashes)
                            .allSatisfy(h -> assertThat(metaserver.ownersOf(NAMESPACE, h))
                                    .contains(b.address())));
            // now resident on B: a second query is a RAM hit, no fetch
            QueryResponse again = scheduler.query(reader.instanceId(), hashes, "req-2");
            assertThat(again.hasReady()).isTrue();
            assertThat(again.getReady().getNumHitBlocks()).isEqualTo(8);
            scheduler.release(again.getReady().getLease());
            reader.unregister();
            owner.unregister();
        }
        RemoteFetchStats stats =
                b.context().getBean(PegaNode.class).remoteTier().orElseThrow().stats();
        assertThat(stats.blocksFetched()).isGreaterThanOrEqualTo(8);
        assertThat(stats.running()).isZero();

        MeterRegistry registry = b.context().getBean(MeterRegistry.class);
        assertThat(registry.get("pegaflow_rdma_fetch")
                        .tag("status", "ok")
                        .functionCounter()
                        .count())
                .isGreaterThanOrEqualTo(1.0);
        assertThat(registry.get("pegaflow_transfer_peer_bytes")
                        .tag("peer", a.address())
                        .tag("direction", "read")
                        .functionCounter()
                        .count())
                .isGreaterThan(0.0);
        assertThat(registry.get("pegaflow_transfer_peer_connections")
                        .tag("peer", a.address())
                        .tag("state", "OPEN")
                        .gauge()
                        .value())
                .isEqualTo(2.0);
        assertThat(registry.get("pegaflow_transfer_peers").gauge().value()).isGreaterThanOrEqualTo(1.0);
        assertThat(registry.get("pegaflow_cache_tier_block_requests")
                        .tag("tier", RemoteFetchTier.NAME)
                        .functionCounter()
                        .count())
                .as("the remote tier's series, bound when the registry was")
                .isGreaterThanOrEqualTo(8.0);
        String view = ChildJvm.httpGet(
                Integer.parseInt(b.context().getEnvironment().getProperty("local.server.port")), "/transfer");
        assertThat(view).contains("\"fabric\":\"ucx\"").contains(a.address()).contains("\"fetches\":{\"attempts\"");
    }

    @Test
    void shouldAnswerTheShorterPrefixTheOwnerHolds() {
        BlockPattern pattern = BlockPattern.perByte(92);
        List<ByteString> hashes = BlockPattern.hashes(92, 6);
        try (MockVllmWorker owner = worker(a, "owner-a2");
                MockVllmWorker reader = worker(b, "reader-b2");
                MockScheduler scheduler = MockScheduler.connect(HOST, b.port())) {
            saveOnA(owner, hashes.subList(0, 4), pattern);
            reader.register();
            QueryReady ready = scheduler.queryUntilReady(reader.instanceId(), hashes, "req-short", WAIT);
            assertThat(ready.getNumHitBlocks()).isEqualTo(4);
            assertThat(reader.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            reader.verifyBlocks(blockIds(4), pattern);
            reader.unregister();
            owner.unregister();
        }
    }

    @Test
    void shouldAnswerAMissWhenTheOwnerIsGone() throws IOException {
        List<ByteString> hashes = BlockPattern.hashes(93, 3);
        String gone = HOST + ":" + freePort();
        metaserver.plant(NAMESPACE, hashes, gone);
        RemoteFetchStats stats =
                b.context().getBean(PegaNode.class).remoteTier().orElseThrow().stats();
        long handshakeFailures = stats.failures(RemoteFetchStats.Failure.HANDSHAKE);
        try (MockVllmWorker reader = worker(b, "reader-b3");
                MockScheduler scheduler = MockScheduler.connect(HOST, b.port())) {
            reader.register();
            QueryReady ready = scheduler.queryUntilReady(reader.instanceId(), hashes, "req-gone", WAIT);
            assertThat(ready.getNumHitBlocks()).isZero();
            reader.unregister();
        } finally {
            metaserver.forget(gone);
        }
        assertThat(stats.failures(RemoteFetchStats.Failure.HANDSHAKE)).isEqualTo(handshakeFailures + 1);
    }

    /**
     * A byte flipped on its way (here: in B's memory after the gets and before verification) makes that block a miss
     * (decision 0031 §3): the answer stops before it, is counted, and what is served is A's bytes exactly; the next
     * query fetches the rest again, clean.
     */
    @Test
    void shouldTreatABlockCorruptedOnTheWireAsAMiss() {
        BlockPattern pattern = BlockPattern.perByte(94);
        List<ByteString> hashes = BlockPattern.hashes(94, 8);
        RemoteFetchTier tier = b.context().getBean(PegaNode.class).remoteTier().orElseThrow();
        long before = tier.stats().failures(RemoteFetchStats.Failure.CHECKSUM);
        AtomicInteger flipped = new AtomicInteger();
        tier.arrivalTap((block, segments) -> {
            if (block == 3 && flipped.getAndIncrement() == 0) {
                long at = segments[0] + 17;
                OffHeap.putByte(at, (byte) (OffHeap.getByte(at) ^ 0x5A));
            }
        });
        try (MockVllmWorker owner = worker(a, "owner-a4");
                MockVllmWorker reader = worker(b, "reader-b4");
                MockScheduler scheduler = MockScheduler.connect(HOST, b.port())) {
            saveOnA(owner, hashes, pattern);
            reader.register();
            QueryReady first = scheduler.queryUntilReady(reader.instanceId(), hashes, "req-crc-1", WAIT);
            assertThat(flipped.get()).as("the tap corrupted block 3").isPositive();
            assertThat(first.getNumHitBlocks())
                    .as("stops before the corrupted block")
                    .isEqualTo(3);
            assertThat(reader.load(first.getLease(), blockIds(3)).succeeded()).isTrue();
            reader.verifyBlocks(blockIds(3), pattern);
            assertThat(tier.stats().failures(RemoteFetchStats.Failure.CHECKSUM)).isEqualTo(before + 1);

            QueryReady again = scheduler.queryUntilReady(reader.instanceId(), hashes, "req-crc-2", WAIT);
            assertThat(again.getNumHitBlocks()).isEqualTo(8);
            assertThat(reader.load(again.getLease(), blockIds(8)).succeeded()).isTrue();
            reader.verifyBlocks(blockIds(8), pattern);
            reader.unregister();
            owner.unregister();
        } finally {
            tier.arrivalTap(null);
        }
        MeterRegistry registry = b.context().getBean(MeterRegistry.class);
        assertThat(registry.get("pegaflow_rdma_fetch_failures")
                        .tag("kind", "CHECKSUM")
                        .functionCounter()
                        .count())
                .isGreaterThanOrEqualTo(1.0);
    }
}
