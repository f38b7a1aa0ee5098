package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.ConnectorRelease;
import io.pegaflow.testkit.GroupedLoads;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LoadResult;
import io.pegaflow.testkit.MockVllmWorker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every connector generation over real gRPC, as the testkit's mock workers play them from upstream's source
 * ({@code novitalabs/pegaflow} v0.22.4 to commit {@code d3ed31a}): each alone and all side by side on one server,
 * byte-exact Save → Query → Load round trips, sealing of G2/G3 instances, the grouped Load of G3 (absent targets,
 * block id 0, empty groups, upstream's error texts), and the registration gate.
 */
@Timeout(120)
class ConnectorGenerationsTest extends ConformanceSupport {
    private static final BlockPattern PATTERN = BlockPattern.perByte(0x5EED);
    private static final KvLayout LAYOUT = KvLayout.kvFirst(4, 16, 1, 16, 2);
    private static final List<String> LAYERS = List.of("model.layers.0.attn", "model.layers.1.attn");

    static Stream<ConnectorRelease> releases() {
        return Stream.of(
                ConnectorRelease.V0_22_4,
                ConnectorRelease.V0_22_8,
                ConnectorRelease.V0_23_6,
                ConnectorRelease.V0_23_12,
                ConnectorRelease.V0_23_12.withVersion("0.25.1"));
    }

    private MockVllmWorker.Builder worker(String id, ConnectorRelease release) {
        MockVllmWorker.Builder b = bareWorker(id).namespace("ns-" + id).connector(release);
        for (String layer : LAYERS) {
            b.layer(layer, LAYOUT);
        }
        return b;
    }

    /** Fill, save, query, zero, load, verify: the bytes come back exactly. */
    private void roundTrip(MockVllmWorker w, int salt) {
        List<ByteString> hashes = BlockPattern.hashes(salt, 4);
        BlockPattern pattern = PATTERN.forSlot("salt", salt);
        w.fillBlocks(blockIds(4), pattern);
        w.save(blockIds(4), hashes);
        QueryReady ready = awaitReady(w.instanceId(), hashes, 4, "rt-" + salt);
        w.zeroBlocks(blockIds(4));

        assertThat(w.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();

        w.verifyBlocks(blockIds(4), pattern);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("releases")
    void shouldRoundTripEachGenerationAlone(ConnectorRelease release) {
        try (MockVllmWorker w = worker("alone", release).build()) {
            w.register();
            roundTrip(w, 1);
            w.unregister();
        }
    }

    @Test
    void shouldServeEveryGenerationSideBySide() {
        List<MockVllmWorker> workers = new ArrayList<>();
        try {
            List<ConnectorRelease> all = releases().toList();
            for (int i = 0; i < all.size(); i++) {
                MockVllmWorker w = worker("side-" + i, all.get(i)).build();
                workers.add(w);
                w.register();
            }
            for (int i = 0; i < workers.size(); i++) {
                roundTrip(workers.get(i), 10 + i);
            }
            assertThat(engine.status().instanceSummaries())
                    .extracting(s -> s.clientVersion() + "/" + s.generation())
                    .containsExactlyInAnyOrder("<missing>/G0", "0.22.8/G1", "0.23.6/G2", "0.23.12/G3", "0.25.1/G3");
        } finally {
            workers.forEach(MockVllmWorker::close);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("releases")
    void shouldRefuseDataCallsUntilEveryRankRegistered(ConnectorRelease release) {
        try (MockVllmWorker rank0 =
                        worker("tp2", release).tp(0, 2).worldSize(2).deviceId(0).build();
                MockVllmWorker rank1 =
                        worker("tp2", release).tp(1, 2).worldSize(2).deviceId(1).build()) {
            rank0.register();
            List<ByteString> hashes = BlockPattern.hashes(20, 4);
            if (!release.sendsNumLayers()) {
                String incomplete = "invalid argument: instance tp2 registration incomplete: 1/2 workers registered";
                assertStatus(() -> rank0.save(blockIds(4), hashes), Status.Code.INVALID_ARGUMENT, incomplete);
                assertStatus(() -> scheduler.query("tp2", hashes, "early"), Status.Code.INVALID_ARGUMENT, incomplete);
                LoadResult early = rank0.load(unknownLease(), blockIds(4));
                assertThat(early.status().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                assertThat(early.status().getDescription()).isEqualTo(incomplete);
            }
            rank1.register();

            rank0.fillBlocks(blockIds(4), PATTERN);
            rank1.fillBlocks(blockIds(4), PATTERN.forSlot("rank", 1));
            rank0.save(blockIds(4), hashes);
            rank1.save(blockIds(4), hashes);
            QueryReady ready = awaitReady("tp2", hashes, 4, "sealed");
            rank0.zeroBlocks(blockIds(4));
            rank1.zeroBlocks(blockIds(4));

            assertThat(rank0.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            assertThat(rank1.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();

            rank0.verifyBlocks(blockIds(4), PATTERN);
            rank1.verifyBlocks(blockIds(4), PATTERN.forSlot("rank", 1));
        }
    }

    @Test
    void shouldRefuseASealThatLeavesASlotWithoutOwner() {
        try (MockVllmWorker rank0 = worker("holes", ConnectorRelease.V0_23_12)
                        .tp(0, 2)
                        .worldSize(2)
                        .deviceId(0)
                        .build();
                MockVllmWorker rank1 = bareWorker("holes")
                        .namespace("ns-holes")
                        .connector(ConnectorRelease.V0_23_12)
                        .tp(1, 2)
                        .worldSize(2)
                        .deviceId(1)
                        .layer(LAYERS.get(0), LAYOUT)
                        .build()) {
            rank0.register();

            assertStatus(
                    rank1::register,
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: instance holes has incomplete KV registration: layer " + LAYERS.get(1)
                            + " has no owner for tp_rank 1 after all 2 workers registered");
            assertThat(engine.status().instanceSummaries().get(0).sealed()).isFalse();
        }
    }

    @Test
    void shouldRefuseASealWithInconsistentGeometryAndAWorkerPastTheWorld() {
        KvLayout other = KvLayout.kvFirst(4, 16, 1, 32, 2);
        try (MockVllmWorker rank0 = worker("geometry", ConnectorRelease.V0_23_12)
                        .tp(0, 2)
                        .worldSize(2)
                        .deviceId(0)
                        .build();
                MockVllmWorker skewed = bareWorker("geometry")
                        .namespace("ns-geometry")
                        .connector(ConnectorRelease.V0_23_12)
                        .tp(1, 2)
                        .worldSize(2)
                        .deviceId(1)
                        .layer(LAYERS.get(0), other)
                        .layer(LAYERS.get(1), LAYOUT)
                        .build();
                MockVllmWorker rank1 = worker("geometry", ConnectorRelease.V0_23_12)
                        .tp(1, 2)
                        .worldSize(2)
                        .deviceId(1)
                        .build();
                MockVllmWorker third = worker("geometry", ConnectorRelease.V0_23_12)
                        .tp(1, 2)
                        .worldSize(2)
                        .deviceId(2)
                        .build()) {
            rank0.register();

            assertStatus(
                    skewed::register,
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: layer " + LAYERS.get(0) + " registered with inconsistent geometry:"
                            + " bytes_per_block=" + LAYOUT.bytesPerBlock() + " segments=2 vs bytes_per_block="
                            + other.bytesPerBlock() + " segments=2 on device 1");
            rank1.register(); // the corrected worker seals the instance
            assertStatus(
                    third::register,
                    Status.Code.INVALID_ARGUMENT,
                    "invalid argument: instance geometry is already fully registered (2 workers); device 2 cannot"
                            + " join");
        }
    }

    @Test
    void shouldLoadNothingIntoAbsentTargetsAndTreatBlockZeroAsATarget() {
        try (MockVllmWorker w = worker("targets", ConnectorRelease.V0_23_12).build()) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(30, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            w.save(blockIds(4), hashes);
            QueryReady ready = awaitReady("targets", hashes, 4, "targets");
            w.zeroBlocks(blockIds(4));

            // Leased block 0 -> device block 0, block 1 absent, block 2 -> 2, block 3 absent.
            LoadResult result = w.loadGroups(
                    List.of(GroupedLoads.group(LAYERS)),
                    List.of(GroupedLoads.lease(
                            ready.getLease(), List.of(GroupedLoads.targets(Arrays.asList(0, null, 2, null))))),
                    WAIT);

            assertThat(result.succeeded()).isTrue();
            w.verifyBlocks(List.of(0, 2), PATTERN);
            w.verifyZeroed(List.of(1, 3));
        }
    }

    @Test
    void shouldKeepGroupIndicesAlignedAcrossAnEmptyGroup() {
        try (MockVllmWorker w = worker("empty-group", ConnectorRelease.V0_23_12).build()) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(31, 2);
            w.fillBlocks(blockIds(2), PATTERN);
            w.save(blockIds(2), hashes);
            QueryReady ready = awaitReady("empty-group", hashes, 2, "empty");
            w.zeroBlocks(blockIds(4));

            // Group 0 has no layers (its targets land nowhere); group 1 puts leased blocks 0, 1 at device 3, 2.
            LoadResult result = w.loadGroups(
                    List.of(GroupedLoads.group(List.of()), GroupedLoads.group(LAYERS)),
                    List.of(GroupedLoads.lease(
                            ready.getLease(),
                            List.of(GroupedLoads.targets(List.of(0, 1)), GroupedLoads.targets(List.of(3, 2))))),
                    WAIT);

            assertThat(result.succeeded()).isTrue();
            w.verifyZeroed(List.of(0, 1));
            for (String layer : LAYERS) {
                BlockPattern slot = PATTERN.forSlot(layer, 0);
                int b = (int) LAYOUT.bytesPerBlock();
                assertThat(w.layers().get(LAYERS.indexOf(layer)).memory().readBytes(LAYOUT.rangeOffset(3, 0), b))
                        .as("K of leased block 0 at device block 3, %s", layer)
                        .isEqualTo(slot.bytes(0, 0, b));
            }
        }
    }

    @Test
    void shouldAnswerMalformedGroupedLoadsWithUpstreamTexts() {
        try (MockVllmWorker w =
                worker("grouped-errors", ConnectorRelease.V0_23_12).build()) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(32, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            w.save(blockIds(4), hashes);
            awaitReady("grouped-errors", hashes, 4, "warm");

            assertLoadFails(
                    w.loadGroups(List.of(), List.of(), WAIT),
                    "invalid argument: load requires at least one layer group");
            assertLoadFails(
                    w.loadGroups(List.of(GroupedLoads.group(LAYERS), GroupedLoads.group(LAYERS)), List.of(), WAIT),
                    "invalid argument: load layer names must be unique across groups");
            ByteString lease = scheduler
                    .queryUntilReady("grouped-errors", hashes, "count", WAIT)
                    .getLease();
            assertLoadFails(
                    w.loadGroups(
                            List.of(GroupedLoads.group(LAYERS.subList(0, 1)), GroupedLoads.group(LAYERS.subList(1, 2))),
                            List.of(GroupedLoads.lease(lease, List.of(GroupedLoads.targets(blockIds(4))))),
                            WAIT),
                    "invalid argument: load group count 1 does not match layer group count 2");
            lease = scheduler
                    .queryUntilReady("grouped-errors", hashes, "short", WAIT)
                    .getLease();
            assertLoadFails(
                    w.loadGroups(
                            List.of(GroupedLoads.group(LAYERS)),
                            List.of(GroupedLoads.lease(lease, List.of(GroupedLoads.targets(blockIds(3))))),
                            WAIT),
                    "invalid argument: query lease block count 4 does not match destination block count 3 for group 0");
        }
    }

    @Test
    void shouldRefuseALegacyLoadForAGroupedInstance() {
        try (MockVllmWorker w = worker("wrong-form", ConnectorRelease.V0_23_12).build()) {
            w.register();
            // The v0.22.4 form: layer names in field 5.
            LoadResult result = w.load(List.of(), LAYERS, WAIT);
            assertThat(result.status().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(result.status().getDescription()).contains("carries layer names");
        }
    }

    @Test
    void shouldRefuseVersionsNotOnTheList() {
        for (String version : List.of("0.21.2", "0.23.6+native-arena-v1", "0.26.0", "garbage")) {
            try (MockVllmWorker w = worker("gate", ConnectorRelease.V0_23_12.withVersion(version))
                    .build()) {
                Status status = statusOf(w::register);
                assertThat(status.getCode()).as(version).isEqualTo(Status.Code.FAILED_PRECONDITION);
                assertThat(status.getDescription())
                        .startsWith("PegaFlow version mismatch: client=" + version + " server=pega-server-")
                        .contains("pega.compat.extra-versions");
            }
        }
        assertThat(engine.status().instanceCount()).isZero();
    }

    @Test
    void shouldRefuseMixedGenerationsInOneInstance() {
        try (MockVllmWorker g3 = worker("mixed", ConnectorRelease.V0_23_12)
                        .tp(0, 2)
                        .worldSize(2)
                        .deviceId(0)
                        .build();
                MockVllmWorker g0 = worker("mixed", ConnectorRelease.V0_22_4)
                        .tp(1, 2)
                        .worldSize(2)
                        .deviceId(1)
                        .build()) {
            g3.register();

            Status status = statusOf(g0::register);

            assertThat(status.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
            assertThat(status.getDescription())
                    .isEqualTo("instance mixed was registered by a generation G3 connector (pegaflow-llm 0.23.7+,"
                            + " client_version 0.23.12); a generation G0 worker (client_version <missing>) cannot"
                            + " join it: all workers of one instance must run one connector generation");
        }
    }

    @Test
    void shouldRefuseAPageFirstDisagreementWithUpstreamText() {
        try (MockVllmWorker rank0 = worker("page", ConnectorRelease.V0_23_12)
                        .tp(0, 2)
                        .worldSize(2)
                        .deviceId(0)
                        .build();
                MockVllmWorker rank1 = worker("page", ConnectorRelease.V0_23_12)
                        .tp(1, 2)
                        .worldSize(2)
                        .deviceId(1)
                        .build()) {
            rank0.stub()
                    .registerContextBatch(rank0.registerRequest().toBuilder()
                            .setPageFirst(true)
                            .build());

            assertStatus(
                    rank1::register,
                    Status.Code.FAILED_PRECONDITION,
                    "topology mismatch: instance page exists with tp=2, world=2, page_first=true; requested tp=2,"
                            + " world=2, page_first=false");
        }
    }

    @Test
    void shouldKeepTheReferenceLayerCountCheckForG0AndG1() {
        for (ConnectorRelease release : List.of(ConnectorRelease.V0_22_4, ConnectorRelease.V0_22_8)) {
            try (MockVllmWorker w = worker("count", release).build()) {
                assertStatus(
                        () -> w.stub()
                                .registerContextBatch(w.registerRequest().toBuilder()
                                        .setNumLayers(0)
                                        .build()),
                        Status.Code.INVALID_ARGUMENT,
                        "num_layers must be > 0");
            }
        }
    }

    @Test
    void shouldShowEachInstancesConnectorOnTheInstancesEndpoint() throws Exception {
        try (MockVllmWorker w = worker("visible", ConnectorRelease.V0_23_12).build()) {
            w.register();
            HttpResponse<String> response = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort() + "/instances"))
                                    .timeout(Duration.ofSeconds(10))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());

            assertThat(response.body())
                    .contains("\"instances\":[\"visible\"]")
                    .contains("\"visible\":{")
                    .contains("\"client_version\":\"0.23.12\"")
                    .contains("\"generation\":\"G3\"");
        }
    }

    private static void assertLoadFails(LoadResult result, String description) {
        assertThat(result.status().getCode()).as("%s", result.status()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(result.status().getDescription()).isEqualTo(description);
    }
}
