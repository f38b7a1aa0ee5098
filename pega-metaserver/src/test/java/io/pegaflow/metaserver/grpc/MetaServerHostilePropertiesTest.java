package io.pegaflow.metaserver.grpc;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static io.pegaflow.metaserver.grpc.Requests.prefixes;
import static io.pegaflow.metaserver.grpc.Requests.query;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.proto.HeartbeatNodeRequest;
import io.pegaflow.proto.InsertBlockHashesRequest;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.proto.QueryPrefixBlocksRequest;
import io.pegaflow.proto.RemoveBlockHashesRequest;
import io.pegaflow.proto.UnregisterNodeRequest;
import io.pegaflow.testkit.hostile.HostileCases;
import io.pegaflow.testkit.hostile.HostileValues;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.instancio.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Property-based hostile input over real gRPC to the metaserver (decision 0016 §2): arbitrary values in every field of
 * HeartbeatNode, UnregisterNode, InsertBlockHashes, RemoveBlockHashes and QueryPrefixBlocks — empty, long and
 * control-character strings, node addresses of every shape (the victim's among them), node_ids in and out of the UUID
 * forms, hash lists that are empty, too long, with empty, oversized and duplicate entries. Each call ends with a code
 * its RPC documents and a short message; the metaserver stays up, and a victim node that is live the whole time keeps
 * its session and its four blocks, whatever an attacker that does not know its node_id sends.
 *
 * <p>The cases come from Instancio (decision 0020): each property is a parameterized test over {@link #TRIES} (or
 * {@link #SESSION_TRIES}) cases that one seeded Instancio stream draws. The seed is random per run unless
 * {@code -Dpega.hostile.seed=<long>} fixes it, and every failure names it with its case index: to replay, run the
 * failing method again with that seed, e.g. {@code ./mvnw -B -ntp -pl pega-metaserver -am verify
 * -Dtest='MetaServerHostilePropertiesTest#insertWithAnyFields' -Dsurefire.failIfNoSpecifiedTests=false
 * -Dpega.hostile.seed=<seed>}; the same seed draws the same cases in the same order. There is no shrinking: the
 * generators stay small and bounded so a failing case is readable.
 */
@ExtendWith(HostileCases.SeedInFailure.class)
class MetaServerHostilePropertiesTest {
    /** Cases per heartbeat and unregister property: the 80 tries they ran with before decision 0020. */
    static final int SESSION_TRIES = 80;

    /** Cases per insert, remove and query property: the 100 tries they ran with before decision 0020. */
    static final int TRIES = 100;

    private static final String VICTIM_NODE = "10.77.0.1:50055";
    private static final UUID VICTIM_ID = UUID.randomUUID();
    private static final String VICTIM_NS = "victim-ns";
    private static final ByteString[] VICTIM_HASHES = {h(1), h(2), h(3), h(4)};
    private static final Set<Status.Code> REFUSALS =
            Set.of(Status.Code.INVALID_ARGUMENT, Status.Code.FAILED_PRECONDITION);

    private static Path dir;
    private static MetaserverTestApp app;

    @BeforeAll
    static void start() throws IOException {
        dir = Files.createTempDirectory("pega-meta-hostile");
        app = MetaserverTestApp.start(
                dir,
                new AdjustableClock(),
                "--pega.metaserver.max-hashes-per-request=64",
                "--pega.metaserver.max-hash-bytes=48",
                "--pega.metaserver.max-namespace-chars=64",
                "--logging.level.root=WARN");
        stub().heartbeatNode(heartbeat(VICTIM_NODE, VICTIM_ID));
        assertThat(stub().insertBlockHashes(insert(VICTIM_NS, VICTIM_NODE, VICTIM_ID, VICTIM_HASHES))
                        .getInsertedCount())
                .isEqualTo(4);
    }

    @AfterAll
    static void stop() throws IOException {
        try {
            if (app != null) {
                victimUntouched();
                app.close();
            }
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static MetaServerGrpc.MetaServerBlockingStub stub() {
        return app.stub().withDeadlineAfter(20, TimeUnit.SECONDS);
    }

    /** After every case: the victim's session is still its own (a heartbeat is accepted) and its blocks are found. */
    @AfterEach
    void afterCase() {
        victimUntouched();
    }

    private static void victimUntouched() {
        stub().heartbeatNode(heartbeat(VICTIM_NODE, VICTIM_ID));
        assertThat(prefixes(stub().queryPrefixBlocks(query(VICTIM_NS, VICTIM_HASHES))))
                .containsEntry(VICTIM_NODE, 4);
    }

    /** Runs the call; it either answers or fails with one of {@code allowed} and a short description. */
    private static void expect(Set<Status.Code> allowed, Supplier<?> call) {
        try {
            assertThat((Object) call.get()).as("reply").isNotNull();
        } catch (StatusRuntimeException e) {
            Status status = e.getStatus();
            assertThat(status.getCode()).as("status %s", status).isIn(allowed);
            assertThat(String.valueOf(status.getDescription()).length())
                    .as("description size")
                    .isLessThan(400);
        }
    }

    /** Any string up to 300 units, an arbitrary host with any int port, a valid address, the victim's, or empty. */
    static String node(Random r) {
        return switch (r.intRange(0, 4)) {
            case 0 -> HostileValues.string(r, 300);
            case 1 -> HostileValues.string(r, 40) + ":" + HostileValues.anyInt(r);
            case 2 -> "10.66.0.9:" + r.intRange(1, 65535);
            case 3 -> VICTIM_NODE;
            default -> "";
        };
    }

    /** Any string up to 80 units, every UUID form the reference accepts (of a new id), a five-group non-UUID, empty. */
    static String nodeId(Random r) {
        // a random (version 4) UUID, drawn from the seeded Random so that a seed replays it
        long high = r.longRange(Long.MIN_VALUE, Long.MAX_VALUE);
        long low = r.longRange(Long.MIN_VALUE, Long.MAX_VALUE);
        UUID id = new UUID((high & ~0xF000L) | 0x4000L, (low & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L);
        return switch (r.intRange(0, 6)) {
            case 0 -> HostileValues.string(r, 80);
            case 1 -> id.toString();
            case 2 -> id.toString().replace("-", "");
            case 3 -> "{" + id + "}";
            case 4 -> "urn:uuid:" + id.toString().toUpperCase(Locale.ROOT);
            case 5 -> "1-2-3-4-5";
            default -> "";
        };
    }

    /** Up to 80 hashes (over the limit of 64), each random bytes up to 64 (over 48) or one of the victim's. */
    static List<ByteString> hashList(Random r) {
        return HostileValues.list(
                r, 80, x -> x.trueOrFalse() ? ByteString.copyFrom(HostileValues.bytes(x, 64)) : x.oneOf(VICTIM_HASHES));
    }

    /** Any string up to 80 units (the limit is 64) or the victim's namespace. */
    static String namespace(Random r) {
        return r.trueOrFalse() ? HostileValues.string(r, 80) : VICTIM_NS;
    }

    record SessionCase(String node, String nodeId) {}

    static Stream<SessionCase> sessionCases() {
        return HostileCases.cases(SessionCase.class, SESSION_TRIES, r -> new SessionCase(node(r), nodeId(r)));
    }

    @ParameterizedTest(name = "[{index}]")
    @MethodSource("sessionCases")
    void heartbeatWithAnyFields(SessionCase c) {
        expect(
                REFUSALS,
                () -> stub().heartbeatNode(HeartbeatNodeRequest.newBuilder()
                        .setNode(c.node())
                        .setNodeId(c.nodeId())
                        .build()));
    }

    @ParameterizedTest(name = "[{index}]")
    @MethodSource("sessionCases")
    void unregisterWithAnyFields(SessionCase c) {
        expect(
                REFUSALS,
                () -> stub().unregisterNode(UnregisterNodeRequest.newBuilder()
                        .setNode(c.node())
                        .setNodeId(c.nodeId())
                        .build()));
    }

    record InsertCase(String namespace, List<ByteString> hashes, String node, String nodeId, boolean registerFirst) {}

    static Stream<InsertCase> insertCases() {
        return HostileCases.cases(
                InsertCase.class,
                TRIES,
                r -> new InsertCase(HostileValues.string(r, 80), hashList(r), node(r), nodeId(r), r.trueOrFalse()));
    }

    @ParameterizedTest(name = "[{index}]")
    @MethodSource("insertCases")
    void insertWithAnyFields(InsertCase c) {
        if (c.registerFirst()) {
            // a registered attacker of its own address: its writes are accepted, and still cannot touch the victim's
            expect(
                    REFUSALS,
                    () -> stub().heartbeatNode(HeartbeatNodeRequest.newBuilder()
                            .setNode(c.node())
                            .setNodeId(c.nodeId())
                            .build()));
        }
        expect(
                REFUSALS,
                () -> stub().insertBlockHashes(InsertBlockHashesRequest.newBuilder()
                        .setNamespace(c.namespace())
                        .addAllBlockHashes(c.hashes())
                        .setNode(c.node())
                        .setNodeId(c.nodeId())
                        .build()));
    }

    record RemoveCase(String namespace, List<ByteString> hashes, String node, String nodeId) {}

    static Stream<RemoveCase> removeCases() {
        return HostileCases.cases(
                RemoveCase.class, TRIES, r -> new RemoveCase(namespace(r), hashList(r), node(r), nodeId(r)));
    }

    @ParameterizedTest(name = "[{index}]")
    @MethodSource("removeCases")
    void removeWithAnyFields(RemoveCase c) {
        expect(
                REFUSALS,
                () -> stub().removeBlockHashes(RemoveBlockHashesRequest.newBuilder()
                        .setNamespace(c.namespace())
                        .addAllBlockHashes(c.hashes())
                        .setNode(c.node())
                        .setNodeId(c.nodeId())
                        .build()));
    }

    record QueryCase(String namespace, List<ByteString> hashes) {}

    static Stream<QueryCase> queryCases() {
        return HostileCases.cases(QueryCase.class, TRIES, r -> new QueryCase(namespace(r), hashList(r)));
    }

    @ParameterizedTest(name = "[{index}]")
    @MethodSource("queryCases")
    void queryWithAnyFields(QueryCase c) {
        expect(
                Set.of(Status.Code.INVALID_ARGUMENT),
                () -> stub().queryPrefixBlocks(QueryPrefixBlocksRequest.newBuilder()
                        .setNamespace(c.namespace())
                        .addAllBlockHashes(c.hashes())
                        .build()));
    }
}
