package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.core.engine.InstanceSummary;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.compat.GroupedLeaseLoad;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.ConnectorRelease;
import io.pegaflow.testkit.GroupedLoads;
import io.pegaflow.testkit.HybridModel;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LoadResult;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hybrid cache groups over real gRPC (upstream {@code novitalabs/pegaflow} #433, pegaflow-llm 0.23.11+): a model of
 * attention layers (storage group 0) and recurrent-state layers (group 1) of another block size, whose connector saves
 * attention blocks for every block and state only at sparse checkpoints. Each group seals against its own slot space,
 * a state group answers membership queries with {@code hit_positions}, and grouped Loads place each group's blocks.
 * Also: TP=2 sealing per group, upstream's error texts, the last two workers of a world registering at once, and a
 * hybrid client beside clients of other generations through a full pool.
 */
@Timeout(120)
class HybridCacheGroupsTest extends ConformanceSupport {
    static final ConnectorRelease HYBRID = HybridModel.RELEASE;
    static final KvLayout ATTENTION = HybridModel.ATTENTION;
    static final List<String> ATTENTION_LAYERS = HybridModel.ATTENTION_LAYERS;
    static final List<String> STATE_LAYERS = HybridModel.STATE_LAYERS;

    private MockVllmWorker.Builder worker(String id) {
        return HybridModel.layers(bareWorker(id).namespace("ns-" + id));
    }

    private static void saveWithCheckpoints(MockVllmWorker w, List<ByteString> hashes, BlockPattern pattern) {
        HybridModel.saveWithCheckpoints(w, hashes, pattern);
    }

    @Test
    void shouldRoundTripAttentionBlocksAndSparseStateCheckpoints() {
        try (MockVllmWorker w = worker("hy").build()) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(70, 8);
            BlockPattern pattern = BlockPattern.perByte(0x4B1D);
            saveWithCheckpoints(w, hashes, pattern);

            // Attention blocks seal without waiting for state slots; the state group seals its two checkpoints.
            QueryReady attention = awaitReady("hy", hashes, 8, "attn");
            assertThat(attention.getHitPositionsList()).isEmpty();
            assertThat(scheduler.awaitMembers("hy", 1, hashes, 2, WAIT)).containsExactly(3, 7);
            QueryReady state = scheduler.query("hy", hashes, "state", 1, false).getReady();
            assertThat(state.getNumHitBlocks()).isEqualTo(2);
            assertThat(state.getHitPositionsList()).containsExactly(3, 7);
            assertThat(state.getLease()).isNotEmpty();
            w.zeroBlocks(blockIds(8));

            LoadResult loaded = HybridModel.loadBoth(w, attention.getLease(), state.getLease(), WAIT);

            assertThat(loaded.succeeded()).as("%s", loaded).isTrue();
            assertThat(HybridModel.firstMismatch(w, pattern)).isEmpty();
            assertThat(w.firstMismatch(STATE_LAYERS, List.of(0, 1, 2, 3, 4, 7), null))
                    .isEmpty();
            InstanceSummary summary = engine.status().instanceSummaries().get(0);
            assertThat(summary.hybrid()).isTrue();
            assertThat(summary.groupLayers()).containsExactly(2, 1);
        }
    }

    @Test
    void shouldAnswerMembershipAndSetQueriesOfAStateGroup() {
        try (MockVllmWorker w = worker("members").build()) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(71, 8);
            saveWithCheckpoints(w, hashes, BlockPattern.perByte(1));
            scheduler.awaitMembers("members", 1, hashes, 2, WAIT);

            QueryReady none = scheduler
                    .query("members", BlockPattern.hashes(72, 3), "none", 1, false)
                    .getReady();
            assertThat(none.getNumHitBlocks()).isZero();
            assertThat(none.getLease()).isEmpty();
            assertThat(none.getHitPositionsList()).isEmpty();

            // A set fetch (wait_for_full_prefix) is all or nothing: complete, it pins every block in order...
            QueryReady complete =
                    scheduler.queryUntilReady("members", List.of(hashes.get(3), hashes.get(7)), "set", 1, true, WAIT);
            assertThat(complete.getHitPositionsList()).containsExactly(0, 1);
            assertThat(complete.getLease()).isNotEmpty();
            scheduler.release(complete.getLease());
            // ...short, it pins nothing and reports the leading hits.
            QueryReady partial = scheduler.queryUntilReady(
                    "members", List.of(hashes.get(3), hashes.get(4), hashes.get(7)), "short", 1, true, WAIT);
            assertThat(partial.getNumHitBlocks()).isEqualTo(1);
            assertThat(partial.getHitPositionsList()).containsExactly(0);
            assertThat(partial.getLease()).isEmpty();

            // Group 0 never sees the state keys: hash 3 alone is an attention hit, not a state one.
            QueryReady prefix = scheduler.queryUntilReady("members", List.of(hashes.get(3)), "prefix", WAIT);
            assertThat(prefix.getNumHitBlocks()).isEqualTo(1);
            assertThat(prefix.getHitPositionsList()).isEmpty();
            scheduler.release(prefix.getLease());
        }
    }

    @Test
    void shouldAnswerHybridMistakesWithUpstreamTexts() {
        try (MockVllmWorker w = worker("hy-err").build()) {
            assertStatus(
                    () -> w.stub()
                            .registerContextBatch(w.registerRequest().toBuilder()
                                    .clearLayerGroupIds()
                                    .addLayerGroupIds(0)
                                    .build()),
                    Status.Code.INVALID_ARGUMENT,
                    "registration metadata length mismatch: layer_names=3, layer_group_ids=1");
            assertStatus(
                    () -> w.stub()
                            .registerContextBatch(w.registerRequest().toBuilder()
                                    .setLayerGroupIds(2, 2)
                                    .build()),
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: storage groups must be dense 0..3: an unregistered group would never seal its"
                            + " blocks");
            assertThat(engine.status().instanceSummaries())
                    .allSatisfy(s -> assertThat(s.sealed()).isFalse());
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(73, 8);
            saveWithCheckpoints(w, hashes, BlockPattern.perByte(2));
            scheduler.awaitMembers("hy-err", 1, hashes, 2, WAIT);

            assertStatus(
                    () -> scheduler.query("hy-err", hashes, "unknown", 2, false),
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: storage group 2 out of range (2 groups)");
            assertStatus(
                    () -> scheduler.query("hy-err", hashes, "huge", -1, false),
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: storage group 4294967295 out of range (2 groups)");

            QueryReady state =
                    scheduler.query("hy-err", hashes, "mix", 1, false).getReady();
            LoadResult mixed = w.loadGroups(
                    List.of(GroupedLoads.group(List.of(ATTENTION_LAYERS.get(0), STATE_LAYERS.get(0)))),
                    List.of(GroupedLoads.lease(state.getLease(), List.of(GroupedLoads.targets(List.of(5, 6))))),
                    WAIT);
            assertThat(mixed.status().getDescription())
                    .isEqualTo("invalid argument: load group mixes storage groups 0 and 1 (layer " + STATE_LAYERS.get(0)
                            + ")");
            assertThat(mixed.succeeded()).isFalse();

            QueryReady again =
                    scheduler.query("hy-err", hashes, "wrong", 1, false).getReady();
            LoadResult wrong = w.loadGroups(
                    List.of(GroupedLoads.group(ATTENTION_LAYERS)),
                    List.of(GroupedLoads.lease(again.getLease(), List.of(GroupedLoads.targets(List.of(5, 6))))),
                    WAIT);
            assertThat(wrong.status().getDescription())
                    .isEqualTo("invalid argument: stored block has 1 slots but storage group 0 of instance hy-err"
                            + " expects 2: namespace is shared by incompatible KV layouts");
        }
    }

    @Test
    void shouldRefuseALayerInAnotherGroupOnAnotherDeviceAndGroupsUnderPageFirst() {
        try (MockVllmWorker rank0 =
                        worker("hy-groups").tp(0, 2).worldSize(2).deviceId(0).build();
                MockVllmWorker rank1 =
                        worker("hy-groups").tp(1, 2).worldSize(2).deviceId(1).build();
                MockVllmWorker pageFirst = worker("hy-page-first").build()) {
            rank0.register();
            assertStatus(
                    () -> rank1.stub()
                            .registerContextBatch(rank1.registerRequest().toBuilder()
                                    .setLayerGroupIds(2, 0)
                                    .setLayerGroupIds(0, 1)
                                    .build()),
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: layer " + ATTENTION_LAYERS.get(0)
                            + " registered in storage group 0 on one device but group 1 on device 1");
            rank1.register(); // a corrected worker completes the instance
            assertThat(engine.status().instanceSummaries())
                    .filteredOn(s -> s.id().equals("hy-groups"))
                    .singleElement()
                    .satisfies(s -> assertThat(s.sealed()).isTrue());

            assertStatus(
                    () -> pageFirst
                            .stub()
                            .registerContextBatch(pageFirst.registerRequest().toBuilder()
                                    .setPageFirst(true)
                                    .build()),
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: page-first storage does not support multiple storage groups (2 registered)");
        }
    }

    @Test
    void shouldSealEachGroupOfATp2InstanceOnItsOwn() {
        try (MockVllmWorker rank0 =
                        worker("hy-tp2").tp(0, 2).worldSize(2).deviceId(0).build();
                MockVllmWorker rank1 =
                        worker("hy-tp2").tp(1, 2).worldSize(2).deviceId(1).build()) {
            rank0.register();
            rank1.register();
            List<ByteString> hashes = BlockPattern.hashes(74, 8);
            BlockPattern pattern0 = BlockPattern.perByte(3);
            BlockPattern pattern1 = pattern0.forSlot("rank", 1);
            saveWithCheckpoints(rank0, hashes, pattern0);
            engine.flushSeals();
            // Rank 1's slots are missing: nothing of either group is complete yet.
            QueryReady before =
                    scheduler.query("hy-tp2", hashes, "before", 1, false).getReady();
            assertThat(before.getHitPositionsList()).isEmpty();
            assertThat(scheduler
                            .queryUntilReady("hy-tp2", hashes, "before0", WAIT)
                            .getNumHitBlocks())
                    .isZero();

            saveWithCheckpoints(rank1, hashes, pattern1);
            QueryReady attention = awaitReady("hy-tp2", hashes, 8, "attn");
            assertThat(scheduler.awaitMembers("hy-tp2", 1, hashes, 2, WAIT)).containsExactly(3, 7);
            QueryReady state =
                    scheduler.query("hy-tp2", hashes, "state", 1, false).getReady();
            for (MockVllmWorker rank : List.of(rank0, rank1)) {
                rank.zeroBlocks(blockIds(8));
                LoadResult loaded = HybridModel.loadBoth(rank, attention.getLease(), state.getLease(), WAIT);
                assertThat(loaded.succeeded()).as("%s", loaded).isTrue();
            }
            assertThat(HybridModel.firstMismatch(rank0, pattern0)).isEmpty();
            assertThat(HybridModel.firstMismatch(rank1, pattern1)).isEmpty();
        }
    }

    /**
     * The last two workers of a world register at once, and together they leave a state slot without an owner: one of
     * them must be the one whose registration completes the world and so is checked whole, every time.
     */
    @Test
    void shouldCheckTheWholeWorldWhenItsLastTwoWorkersRegisterTogether() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 20; round++) {
                String id = "race-" + round;
                try (MockVllmWorker rank0 =
                                worker(id).tp(0, 2).worldSize(2).deviceId(0).build();
                        MockVllmWorker rank1 = bareWorker(id)
                                .namespace("ns-" + id)
                                .connector(HYBRID)
                                .layer(ATTENTION_LAYERS.get(0), ATTENTION)
                                .layer(ATTENTION_LAYERS.get(1), ATTENTION)
                                .tp(1, 2)
                                .worldSize(2)
                                .deviceId(1)
                                .build()) {
                    CyclicBarrier start = new CyclicBarrier(2);
                    List<Future<Status>> outcomes = new ArrayList<>();
                    for (MockVllmWorker w : List.of(rank0, rank1)) {
                        outcomes.add(pool.submit(() -> {
                            start.await(10, TimeUnit.SECONDS);
                            try {
                                w.register();
                                return Status.OK;
                            } catch (StatusRuntimeException e) {
                                return e.getStatus();
                            }
                        }));
                    }
                    List<Status> statuses = new ArrayList<>();
                    for (Future<Status> f : outcomes) {
                        statuses.add(f.get(30, TimeUnit.SECONDS));
                    }
                    assertThat(statuses)
                            .filteredOn(Status::isOk)
                            .as("round %d: %s", round, statuses)
                            .hasSize(1);
                    assertThat(statuses)
                            .filteredOn(s -> !s.isOk())
                            .singleElement()
                            .satisfies(s -> assertThat(s.getDescription())
                                    .isEqualTo("invalid argument: instance " + id + " has incomplete KV registration:"
                                            + " layer " + STATE_LAYERS.get(0) + " has no owner for tp_rank 1 after"
                                            + " all 2 workers registered"));
                    assertThat(engine.status().instanceSummaries())
                            .filteredOn(s -> s.id().equals(id))
                            .singleElement()
                            .satisfies(s -> assertThat(s.sealed()).isFalse());
                }
                engine.cleanupInstances(null);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldShowGroupsOnTheInstancesEndpoint() throws Exception {
        try (MockVllmWorker w = worker("hy-visible").build()) {
            w.register();
            String body = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort() + "/instances"))
                                    .timeout(WAIT)
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            assertThat(body).contains("\"groups\":2").contains("\"hybrid\":true");
        }
    }

    static List<Integer> range(int from, int to) {
        return IntStream.range(from, to).boxed().toList();
    }

    /**
     * Steady state: a hybrid client and two dense clients of other generations (v0.22.4, 0.23.6) save, query and
     * load at once, each round new blocks, about 60 MiB through the 16 MiB pool; whatever each query answers loads
     * byte-exact, and the state group's positions only ever name checkpoints.
     */
    @Test
    void shouldServeAHybridClientBesideOtherGenerationsThroughAFullPool() throws Exception {
        int rounds = 24;
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try (MockVllmWorker hybrid = HybridModel.layers(
                                bareWorker("steady-hybrid").namespace("ns-steady-hybrid"),
                                KvLayout.kvFirst(16, 16, 8, 64, 2),
                                KvLayout.contiguous(16, 48 * 1024))
                        .build();
                MockVllmWorker g0 = bareWorker("steady-g0")
                        .namespace("ns-steady-g0")
                        .layer("layer_0", KvLayout.contiguous(16, 128 * 1024))
                        .build();
                MockVllmWorker g2 = bareWorker("steady-g2")
                        .namespace("ns-steady-g2")
                        .connector(ConnectorRelease.V0_23_6)
                        .layer("layer_0", KvLayout.contiguous(16, 128 * 1024))
                        .build()) {
            hybrid.register();
            g0.register();
            g2.register();
            List<Future<Integer>> full = new ArrayList<>();
            full.add(pool.submit(() -> hybridRounds(hybrid, rounds)));
            full.add(pool.submit(() -> denseRounds(g0, rounds, 2000)));
            full.add(pool.submit(() -> denseRounds(g2, rounds, 3000)));
            for (Future<Integer> f : full) {
                assertThat(f.get(100, TimeUnit.SECONDS))
                        .as("rounds whose every block came back")
                        .isPositive();
            }
            assertThat(engine.metrics().count(EngineCounter.CACHE_EVICTIONS))
                    .as("the pool was full")
                    .isPositive();
        } finally {
            pool.shutdownNow();
        }
    }

    /** @return the rounds in which all 8 attention blocks and both checkpoints hit */
    private int hybridRounds(MockVllmWorker w, int rounds) {
        int complete = 0;
        try (MockScheduler own = MockScheduler.connect(HOST, port())) {
            for (int round = 0; round < rounds; round++) {
                List<ByteString> hashes = BlockPattern.hashes(1000 + round, HybridModel.BLOCKS);
                BlockPattern pattern = BlockPattern.perByte(1000 + round);
                if (!saved(() -> HybridModel.saveWithCheckpoints(w, hashes, pattern))) {
                    continue;
                }
                engine.flushSeals();
                QueryReady attention = own.queryUntilReady(w.instanceId(), hashes, "a" + round, WAIT);
                QueryReady state =
                        own.query(w.instanceId(), hashes, "s" + round, 1, false).getReady();
                assertThat(state.getHitPositionsList()).isSubsetOf(HybridModel.CHECKPOINTS);
                int hits = (int) attention.getNumHitBlocks();
                List<Integer> stateTargets = state.getHitPositionsList().stream()
                        .map(p -> HybridModel.STATE_BLOCKS.get(HybridModel.CHECKPOINTS.indexOf(p)))
                        .toList();
                w.zeroBlocks(HybridModel.attentionBlocks());
                List<GroupedLeaseLoad> loads = new ArrayList<>();
                if (hits > 0) {
                    loads.add(GroupedLoads.lease(
                            attention.getLease(),
                            List.of(
                                    GroupedLoads.targets(List.copyOf(range(0, hits))),
                                    GroupedLoads.targets(Collections.nCopies(hits, null)))));
                }
                if (!stateTargets.isEmpty()) {
                    loads.add(GroupedLoads.lease(
                            state.getLease(),
                            List.of(
                                    GroupedLoads.targets(Collections.nCopies(stateTargets.size(), null)),
                                    GroupedLoads.targets(List.copyOf(stateTargets)))));
                }
                if (!loads.isEmpty()) {
                    LoadResult loaded = w.loadGroups(
                            List.of(GroupedLoads.group(ATTENTION_LAYERS), GroupedLoads.group(STATE_LAYERS)),
                            loads,
                            WAIT);
                    assertThat(loaded.succeeded()).as("%s", loaded).isTrue();
                }
                assertThat(w.firstMismatch(ATTENTION_LAYERS, range(0, hits), pattern))
                        .isEmpty();
                assertThat(w.firstMismatch(STATE_LAYERS, stateTargets, pattern.forSlot("state", 1)))
                        .isEmpty();
                if (hits == HybridModel.BLOCKS && stateTargets.size() == 2) {
                    complete++;
                }
            }
        }
        return complete;
    }

    /** @return the rounds in which all 8 blocks hit */
    private int denseRounds(MockVllmWorker w, int rounds, int salt) {
        int complete = 0;
        try (MockScheduler own = MockScheduler.connect(HOST, port())) {
            for (int round = 0; round < rounds; round++) {
                List<ByteString> hashes = BlockPattern.hashes(salt + round, 8);
                BlockPattern pattern = BlockPattern.perByte(salt + round);
                w.fillBlocks(blockIds(8), pattern);
                if (!saved(() -> w.save(blockIds(8), hashes))) {
                    continue;
                }
                engine.flushSeals();
                QueryReady ready = own.queryUntilReady(w.instanceId(), hashes, "d" + round, WAIT);
                int hits = (int) ready.getNumHitBlocks();
                w.zeroBlocks(blockIds(8));
                if (hits > 0) {
                    assertThat(w.load(ready.getLease(), range(0, hits)).succeeded())
                            .isTrue();
                }
                assertThat(w.firstMismatch(range(0, hits), pattern)).isEmpty();
                if (hits == 8) {
                    complete++;
                }
            }
        }
        return complete;
    }

    /** Runs a save; a pool whose blocks are all leased at that moment refuses it with the reference's INTERNAL. */
    private static boolean saved(Runnable save) {
        try {
            save.run();
            return true;
        } catch (StatusRuntimeException e) {
            assertThat(e.getStatus().getCode()).as("%s", e.getStatus()).isEqualTo(Status.Code.INTERNAL);
            assertThat(e.getStatus().getDescription()).startsWith("storage error: pinned pool exhausted");
            return false;
        }
    }
}
