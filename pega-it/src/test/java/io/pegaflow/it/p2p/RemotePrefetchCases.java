package io.pegaflow.it.p2p;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.protobuf.ByteString;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.QueryPrefixBlocksRequest;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.QueryResponse;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.ChildJvm;
import io.pegaflow.testkit.HybridModel;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LoadResult;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ReferenceHarness;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * Remote prefetch as a tier, seen from outside: a client of node b asks for a prefix only node a holds. Mixed into
 * {@link P2pClusterContract}, so it runs on its processes, at both kinds of site. The test that SIGKILLs node a is
 * ordered last: nothing of the class needs a afterwards.
 */
interface RemotePrefetchCases {
    Duration WAIT = Duration.ofSeconds(60);
    /** Large enough that the gets take a while over TCP, so a SIGKILL of the owner lands during them. */
    KvLayout LARGE = KvLayout.contiguous(512, 64 * 1024);

    TwoNodeCluster cluster();

    private MockVllmWorker worker(TwoNodeCluster.Node node, String instanceId, KvLayout layout, List<String> layers) {
        MockVllmWorker w = MockVllmWorker.builder("127.0.0.1", node.localGrpc())
                .instanceId(instanceId)
                .namespace(P2pClusterContract.NAMESPACE)
                .sharedLayers(layers, layout)
                .loadTimeout(WAIT)
                .build();
        w.register();
        return w;
    }

    private boolean ownsPrefix(String node, List<ByteString> hashes) {
        try {
            return cluster()
                    .metaserverStub()
                    .withDeadlineAfter(5, TimeUnit.SECONDS)
                    .queryPrefixBlocks(QueryPrefixBlocksRequest.newBuilder()
                            .setNamespace(P2pClusterContract.NAMESPACE)
                            .addAllBlockHashes(hashes)
                            .build())
                    .getNodesList()
                    .stream()
                    .anyMatch(r -> r.getNode().equals(node) && r.getPrefixLen() == hashes.size());
        } catch (StatusRuntimeException notNow) {
            return false;
        }
    }

    /** Saves {@code blocks} blocks of {@code owner} and waits until the metaserver offers them from node a. */
    private void saveOnA(MockVllmWorker owner, List<ByteString> hashes, BlockPattern pattern) {
        List<Integer> ids = ReferenceHarness.blockIds(hashes.size());
        owner.fillBlocks(ids, pattern);
        owner.save(ids, hashes);
        try (MockScheduler scheduler =
                MockScheduler.connect("127.0.0.1", cluster().a().localGrpc())) {
            scheduler.awaitSealed(owner.instanceId(), hashes, WAIT);
        }
        String a = cluster().a().advertised();
        await().atMost(WAIT).until(() -> ownsPrefix(a, hashes));
    }

    /** The tiers a query decision is attributed to on these nodes (no SSD): every requested block is one of them. */
    List<String> TIERS = List.of("ram", "rdma", "miss");

    /** {@code pegaflow_cache_tier_block_requests_total} of {@code node} by tier, 0 where a tier has no sample yet. */
    private Map<String, Double> tierBlocks(TwoNodeCluster.Node node) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (String tier : TIERS) {
            out.put(
                    tier,
                    NodeHttp.metric(node, "pegaflow_cache_tier_block_requests_total", "tier", tier)
                            .orElse(0));
        }
        return out;
    }

    private static Map<String, Double> since(Map<String, Double> before, Map<String, Double> after) {
        Map<String, Double> out = new LinkedHashMap<>();
        after.forEach((tier, v) -> out.put(tier, v - before.get(tier)));
        return out;
    }

    @Test
    default void shouldFetchAPrefixOnlyThePeerHoldsByteExactAndBecomeAnOwner() throws Exception {
        List<ByteString> hashes = BlockPattern.hashes(14_101, 8);
        BlockPattern pattern = BlockPattern.perByte(14_101);
        List<Integer> ids = ReferenceHarness.blockIds(8);
        try (MockVllmWorker owner =
                        worker(cluster().a(), "remote-owner", P2pClusterContract.LAYOUT, P2pClusterContract.LAYERS);
                MockVllmWorker reader =
                        worker(cluster().b(), "remote-reader", P2pClusterContract.LAYOUT, P2pClusterContract.LAYERS);
                MockScheduler scheduler =
                        MockScheduler.connect("127.0.0.1", cluster().b().localGrpc())) {
            saveOnA(owner, hashes, pattern);
            Map<String, Double> before = tierBlocks(cluster().b());

            PrefetchTiming t = PrefetchTiming.untilReady(scheduler, reader.instanceId(), hashes, "remote-1", WAIT);
            assertThat(t.loadingAnswers())
                    .as("Loading while the peer's blocks come")
                    .isPositive();
            assertThat(t.ready().getNumHitBlocks())
                    .as("hits%s", cluster().logs())
                    .isEqualTo(8);

            reader.zeroBlocks(ids);
            LoadResult load = reader.load(t.ready().getLease(), ids, WAIT);
            assertThat(load.succeeded()).as("load: %s", load).isTrue();
            reader.verifyBlocks(ids, pattern);

            // b's Prometheus endpoint attributes the decision: the 8 blocks came from the peer, none from RAM or missed
            // (ram + remote + miss == requested).
            Map<String, Double> afterFetch = tierBlocks(cluster().b());
            assertThat(NodeHttp.metric(cluster().b(), "pegaflow_cache_tier_block_requests_total", "tier", "rdma"))
                    .as("the remote tier's sample on b's /metrics")
                    .isPresent();
            assertThat(since(before, afterFetch))
                    .as("blocks by tier for the fetched prefix")
                    .isEqualTo(Map.of("ram", 0.0, "rdma", 8.0, "miss", 0.0));

            // Now resident on b: the same prefix again is a RAM hit, and nothing goes to the peer.
            QueryResponse again = scheduler.query(reader.instanceId(), hashes, "remote-2");
            assertThat(again.hasReady()).as("the second answer: %s", again).isTrue();
            assertThat(again.getReady().getNumHitBlocks()).isEqualTo(8);
            scheduler.release(again.getReady().getLease());
            assertThat(since(afterFetch, tierBlocks(cluster().b())))
                    .as("blocks by tier for the second query")
                    .isEqualTo(Map.of("ram", 8.0, "rdma", 0.0, "miss", 0.0));

            // b announced what it fetched: it is now an owner of the prefix too.
            String b = cluster().b().advertised();
            await().atMost(WAIT).until(() -> ownsPrefix(b, hashes));
            reader.unregister();
            owner.unregister();
        }
    }

    /** The key bytes of a state-group block: the hash and the group as four big-endian bytes (upstream #433). */
    private static List<ByteString> groupKeys(List<ByteString> hashes, int group) {
        return hashes.stream()
                .map(h -> h.concat(ByteString.copyFrom(new byte[] {0, 0, 0, (byte) group})))
                .toList();
    }

    /**
     * A hybrid instance's two groups fetched from the peer that saved them: the metaserver and the transfer carry the
     * state group's keys, and the reader gets attention by prefix and the checkpoints by all-or-nothing set fetch,
     * byte-exact.
     */
    @Test
    default void shouldFetchBothGroupsOfAHybridInstanceFromThePeerByteExact() throws Exception {
        List<ByteString> hashes = BlockPattern.hashes(14_301, HybridModel.BLOCKS);
        BlockPattern pattern = BlockPattern.perByte(14_301);
        try (MockVllmWorker owner = HybridModel.layers(MockVllmWorker.builder(
                                        "127.0.0.1", cluster().a().localGrpc())
                                .instanceId("hybrid-owner")
                                .namespace(P2pClusterContract.NAMESPACE)
                                .loadTimeout(WAIT))
                        .build();
                MockVllmWorker reader = HybridModel.layers(MockVllmWorker.builder(
                                        "127.0.0.1", cluster().b().localGrpc())
                                .instanceId("hybrid-reader")
                                .namespace(P2pClusterContract.NAMESPACE)
                                .loadTimeout(WAIT))
                        .build();
                MockScheduler onA =
                        MockScheduler.connect("127.0.0.1", cluster().a().localGrpc());
                MockScheduler onB =
                        MockScheduler.connect("127.0.0.1", cluster().b().localGrpc())) {
            owner.register();
            reader.register();
            HybridModel.saveWithCheckpoints(owner, hashes, pattern);
            onA.awaitSealed(owner.instanceId(), hashes, WAIT);
            onA.awaitMembers(owner.instanceId(), 1, hashes, HybridModel.CHECKPOINTS.size(), WAIT);
            String a = cluster().a().advertised();
            await().atMost(WAIT)
                    .until(() ->
                            ownsPrefix(a, hashes) && ownsPrefix(a, groupKeys(HybridModel.checkpointHashes(hashes), 1)));

            QueryResponse none = onB.query(reader.instanceId(), hashes, "hybrid-members", 1, false);
            assertThat(none.getReady().getNumHitBlocks())
                    .as("membership answers from b's RAM alone")
                    .isZero();
            QueryReady attention = onB.queryUntilReady(reader.instanceId(), hashes, "hybrid-attention", WAIT);
            assertThat(attention.getNumHitBlocks())
                    .as("hits%s", cluster().logs())
                    .isEqualTo(HybridModel.BLOCKS);
            QueryReady state = onB.queryUntilReady(
                    reader.instanceId(), HybridModel.checkpointHashes(hashes), "hybrid-state", 1, true, WAIT);
            assertThat(state.getHitPositionsList())
                    .as("set fetch%s", cluster().logs())
                    .containsExactly(0, 1);

            reader.zeroBlocks(reader.layerNames(), HybridModel.attentionBlocks());
            LoadResult load = HybridModel.loadBoth(reader, attention.getLease(), state.getLease(), WAIT);
            assertThat(load.succeeded()).as("load: %s", load).isTrue();
            assertThat(HybridModel.firstMismatch(reader, pattern)).isEmpty();
            reader.unregister();
            owner.unregister();
        }
    }

    /** What a third server JVM needs beside the two: its pool, its heap and UCX's buffers, with room to spare. */
    long THIRD_SERVER_BYTES = 1L << 30;

    /** {@code MemAvailable} of /proc/meminfo in bytes, or -1 where it cannot be read. */
    private static long memAvailable() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemAvailable:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }

    @Test
    default void shouldRefuseAThirdServerWithOtherConnectionsPerPeerNamingBothValues() throws Exception {
        long available = memAvailable();
        assumeTrue(
                available >= THIRD_SERVER_BYTES,
                () -> "a third server process needs about 1 GiB free, MemAvailable is " + (available >> 20)
                        + " MiB: the qps-per-peer mismatch between real processes is not tested here");
        int otherQps = P2pClusterContract.QPS_PER_PEER + 1;
        List<String> args = new ArrayList<>();
        for (String arg : P2pClusterContract.serverArgs(cluster().b().site())) {
            args.add(arg.startsWith("--pega.rdma.qps-per-peer=") ? "--pega.rdma.qps-per-peer=" + otherQps : arg);
        }
        List<ByteString> hashes = BlockPattern.hashes(14_301, 4);
        TwoNodeCluster.Node c = cluster().startAnother("node-c", cluster().b().site(), args);
        try (MockVllmWorker owner =
                        worker(cluster().a(), "qps-owner", P2pClusterContract.LAYOUT, P2pClusterContract.LAYERS);
                MockVllmWorker reader = worker(c, "qps-reader", P2pClusterContract.LAYOUT, P2pClusterContract.LAYERS);
                MockScheduler scheduler = MockScheduler.connect("127.0.0.1", c.localGrpc())) {
            saveOnA(owner, hashes, BlockPattern.perByte(14_301));

            // c asks node a for the prefix: a refuses the handshake, and c answers a miss.
            PrefetchTiming t = PrefetchTiming.untilReady(scheduler, reader.instanceId(), hashes, "qps-1", WAIT);
            assertThat(t.ready().getNumHitBlocks()).as("hits on c").isZero();
            if (!t.ready().getLease().isEmpty()) {
                scheduler.release(t.ready().getLease());
            }
            assertThat(NodeHttp.metric(c, "pegaflow_rdma_fetch_failures_total", "kind", "HANDSHAKE"))
                    .as("c's failed handshakes")
                    .hasValue(1.0);
            String log = c.process().logText();
            assertThat(log)
                    .as("node c's log")
                    .contains("handshake with " + cluster().a().advertised() + " failed")
                    .contains("FAILED_PRECONDITION")
                    .contains(
                            "qps_per_peer mismatch: local=" + P2pClusterContract.QPS_PER_PEER + ", remote=" + otherQps);
            assertThat(scheduler.health().getStatus().getOk()).isTrue();
            reader.unregister();
            owner.unregister();
        } finally {
            c.process().close();
        }
        // node a refused c and stays healthy and unconnected to it
        try (MockScheduler ofA =
                MockScheduler.connect("127.0.0.1", cluster().a().localGrpc())) {
            assertThat(ofA.health().getStatus().getOk()).isTrue();
        }
        assertThat(ChildJvm.httpGet(cluster().a().localHttp(), "/metrics"))
                .as("node a's peers")
                .isNotNull()
                .doesNotContain("peer=\"" + c.advertised() + "\"");
    }

    @Test
    @Order(Integer.MAX_VALUE)
    default void shouldStayHealthyWhenTheOwnerIsKilledDuringATransfer() throws Exception {
        int blocks = (int) LARGE.numBlocks();
        List<ByteString> hashes = BlockPattern.hashes(14_201, blocks);
        BlockPattern pattern = BlockPattern.perByte(14_201);
        List<String> layers = List.of("layer_0");
        try (MockVllmWorker owner = worker(cluster().a(), "killed-owner", LARGE, layers);
                MockVllmWorker reader = worker(cluster().b(), "survivor", LARGE, layers);
                MockScheduler scheduler =
                        MockScheduler.connect("127.0.0.1", cluster().b().localGrpc())) {
            saveOnA(owner, hashes, pattern);

            // The first answer is Loading: the fetch has started. The owner dies under it.
            assertThat(scheduler.query(reader.instanceId(), hashes, "killed-1").hasLoading())
                    .isTrue();
            assertThat(cluster().a().process().kill()).isEqualTo(137);

            // b answers: a miss or a shorter prefix, never an error, and whatever it returns is exact.
            PrefetchTiming t = PrefetchTiming.untilReady(scheduler, reader.instanceId(), hashes, "killed-1", WAIT);
            long hits = t.ready().getNumHitBlocks();
            System.out.printf(
                    "owner SIGKILLed during the fetch: b answered %d of %d blocks after %d Loading answers%n",
                    hits, blocks, t.loadingAnswers() + 1);
            assertThat(hits).isBetween(0L, (long) blocks);
            if (hits > 0) {
                List<Integer> prefix = ReferenceHarness.blockIds((int) hits);
                reader.zeroBlocks(prefix);
                LoadResult load = reader.load(t.ready().getLease(), prefix, WAIT);
                assertThat(load.succeeded())
                        .as("load of the %d blocks b kept: %s", hits, load)
                        .isTrue();
                reader.verifyBlocks(prefix, pattern);
            } else if (!t.ready().getLease().isEmpty()) {
                scheduler.release(t.ready().getLease());
            }
            assertThat(scheduler.health().getStatus().getOk()).isTrue();

            // Nothing of the failed fetch stays behind in b's pool: once its index is dropped, no allocation is left.
            NodeHttp.adminPost(cluster().b(), "/cache/memory/cleanup");
            await().atMost(WAIT)
                    .until(() -> NodeHttp.metric(cluster().b(), "pegaflow_pool_outstanding_allocations")
                                    .orElse(-1)
                            == 0);
            reader.unregister();
        }
    }
}
