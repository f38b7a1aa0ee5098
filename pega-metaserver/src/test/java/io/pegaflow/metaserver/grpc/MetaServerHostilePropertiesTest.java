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
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.StringLength;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterTry;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Property-based hostile input over real gRPC to the metaserver (issue #10, decision 0016 §2): arbitrary values in
 * every field of HeartbeatNode, UnregisterNode, InsertBlockHashes, RemoveBlockHashes and QueryPrefixBlocks —
 * empty, long and control-character strings, node addresses of every shape (the victim's among them), node_ids in and
 * out of the UUID forms, hash lists that are empty, too long, with empty, oversized and duplicate entries. Each call
 * ends with a code its RPC documents and a short message; the metaserver stays up, and a victim node that is live the
 * whole time keeps its session and its four blocks, whatever an attacker that does not know its node_id sends.
 */
class MetaServerHostilePropertiesTest {
    private static final String VICTIM_NODE = "10.77.0.1:50055";
    private static final UUID VICTIM_ID = UUID.randomUUID();
    private static final String VICTIM_NS = "victim-ns";
    private static final ByteString[] VICTIM_HASHES = {h(1), h(2), h(3), h(4)};
    private static final Set<Status.Code> REFUSALS =
            Set.of(Status.Code.INVALID_ARGUMENT, Status.Code.FAILED_PRECONDITION);

    private static Path dir;
    private static MetaserverTestApp app;

    @BeforeContainer
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

    @AfterContainer
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

    /** After every try: the victim's session is still its own (a heartbeat is accepted) and its blocks are found. */
    @AfterTry
    void afterTry() {
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

    @Provide
    Arbitrary<String> nodes() {
        Arbitrary<String> hostPort = Arbitraries.strings()
                .ofMaxLength(40)
                .flatMap(host -> Arbitraries.integers().map(port -> host + ":" + port));
        return Arbitraries.oneOf(
                Arbitraries.strings().ofMaxLength(300),
                hostPort,
                Arbitraries.integers().between(1, 65535).map(port -> "10.66.0.9:" + port),
                Arbitraries.just(VICTIM_NODE),
                Arbitraries.just(""));
    }

    @Provide
    Arbitrary<String> nodeIds() {
        Arbitrary<UUID> ids = Arbitraries.create(UUID::randomUUID);
        return Arbitraries.oneOf(
                Arbitraries.strings().ofMaxLength(80),
                ids.map(UUID::toString),
                ids.map(id -> id.toString().replace("-", "")),
                ids.map(id -> "{" + id + "}"),
                ids.map(id -> "urn:uuid:" + id.toString().toUpperCase(java.util.Locale.ROOT)),
                Arbitraries.just("1-2-3-4-5"),
                Arbitraries.just(""));
    }

    @Provide
    Arbitrary<List<ByteString>> hashLists() {
        Arbitrary<ByteString> one = Arbitraries.oneOf(
                Arbitraries.bytes().array(byte[].class).ofMaxSize(64).map(ByteString::copyFrom),
                Arbitraries.of(VICTIM_HASHES));
        return one.list().ofMaxSize(80);
    }

    @Property(tries = 80)
    void heartbeatWithAnyFields(@ForAll("nodes") String node, @ForAll("nodeIds") String nodeId) {
        expect(
                REFUSALS,
                () -> stub().heartbeatNode(HeartbeatNodeRequest.newBuilder()
                        .setNode(node)
                        .setNodeId(nodeId)
                        .build()));
    }

    @Property(tries = 80)
    void unregisterWithAnyFields(@ForAll("nodes") String node, @ForAll("nodeIds") String nodeId) {
        expect(
                REFUSALS,
                () -> stub().unregisterNode(UnregisterNodeRequest.newBuilder()
                        .setNode(node)
                        .setNodeId(nodeId)
                        .build()));
    }

    @Property(tries = 100)
    void insertWithAnyFields(
            @ForAll @StringLength(max = 80) String namespace,
            @ForAll("hashLists") List<ByteString> hashes,
            @ForAll("nodes") String node,
            @ForAll("nodeIds") String nodeId,
            @ForAll boolean registerFirst) {
        if (registerFirst) {
            // a registered attacker of its own address: its writes are accepted, and still cannot touch the victim's
            expect(
                    REFUSALS,
                    () -> stub().heartbeatNode(HeartbeatNodeRequest.newBuilder()
                            .setNode(node)
                            .setNodeId(nodeId)
                            .build()));
        }
        expect(
                REFUSALS,
                () -> stub().insertBlockHashes(InsertBlockHashesRequest.newBuilder()
                        .setNamespace(namespace)
                        .addAllBlockHashes(hashes)
                        .setNode(node)
                        .setNodeId(nodeId)
                        .build()));
    }

    @Property(tries = 100)
    void removeWithAnyFields(
            @ForAll("namespaces") String namespace,
            @ForAll("hashLists") List<ByteString> hashes,
            @ForAll("nodes") String node,
            @ForAll("nodeIds") String nodeId) {
        expect(
                REFUSALS,
                () -> stub().removeBlockHashes(RemoveBlockHashesRequest.newBuilder()
                        .setNamespace(namespace)
                        .addAllBlockHashes(hashes)
                        .setNode(node)
                        .setNodeId(nodeId)
                        .build()));
    }

    @Provide
    Arbitrary<String> namespaces() {
        return Arbitraries.oneOf(Arbitraries.strings().ofMaxLength(80), Arbitraries.just(VICTIM_NS));
    }

    @Property(tries = 100)
    void queryWithAnyFields(@ForAll("namespaces") String namespace, @ForAll("hashLists") List<ByteString> hashes) {
        expect(
                Set.of(Status.Code.INVALID_ARGUMENT),
                () -> stub().queryPrefixBlocks(QueryPrefixBlocksRequest.newBuilder()
                        .setNamespace(namespace)
                        .addAllBlockHashes(hashes)
                        .build()));
    }
}
