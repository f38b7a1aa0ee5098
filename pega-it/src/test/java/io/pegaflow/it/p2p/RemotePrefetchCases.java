package io.pegaflow.it.p2p;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.QueryPrefixBlocksRequest;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LoadResult;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ReferenceHarness;
import java.time.Duration;
import java.util.List;
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

            // b announced what it fetched: it is now an owner of the prefix too.
            String b = cluster().b().advertised();
            await().atMost(WAIT).until(() -> ownsPrefix(b, hashes));
            reader.unregister();
            owner.unregister();
        }
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
