package io.pegaflow.metaserver.grpc;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static io.pegaflow.metaserver.grpc.Requests.query;
import static io.pegaflow.metaserver.grpc.Requests.remove;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.proto.HeartbeatNodeRequest;
import io.pegaflow.proto.InsertBlockHashesRequest;
import io.pegaflow.proto.InsertBlockHashesResponse;
import io.pegaflow.proto.MetaServerGrpc.MetaServerBlockingStub;
import io.pegaflow.proto.QueryPrefixBlocksRequest;
import io.pegaflow.proto.RemoveBlockHashesResponse;
import java.nio.file.Path;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad inputs get clear errors: the reference's own (invalid node_id, the empty-list quirk) and ours (empty or
 * malformed node, oversized batches, oversized hashes and namespaces), in the reference's validation order.
 */
@Tag("integration")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaServerValidationTest {

    static final String NODE = "10.9.0.1:50055";

    @TempDir
    static Path dir;

    MetaserverTestApp app;
    MetaServerBlockingStub stub;
    final UUID id = UUID.randomUUID();

    @BeforeAll
    void start() {
        app = MetaserverTestApp.start(dir, new AdjustableClock(), "--pega.metaserver.max-hashes-per-request=1000");
        stub = app.stub();
        stub.heartbeatNode(heartbeat(NODE, id));
    }

    @AfterAll
    void stop() {
        if (app != null) {
            app.close();
        }
    }

    static Status status(Runnable call) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, call::run);
        assertThat(e).as("expected a gRPC error").isNotNull();
        return e.getStatus();
    }

    @Test
    void shouldAnswerAnEmptyInsertOrRemoveWithOkFalseBeforeAnyOtherCheck() {
        // Reference quirk: gRPC OK, failure in the body, even with a bogus node_id.
        InsertBlockHashesResponse inserted = stub.insertBlockHashes(InsertBlockHashesRequest.newBuilder()
                .setNode("")
                .setNodeId("not-a-uuid")
                .build());
        assertThat(inserted.getStatus().getOk()).isFalse();
        assertThat(inserted.getStatus().getMessage()).isEqualTo("block_hashes cannot be empty");
        assertThat(inserted.getInsertedCount()).isZero();

        RemoveBlockHashesResponse removed = stub.removeBlockHashes(remove("ns", NODE, id));
        assertThat(removed.getStatus().getOk()).isFalse();
        assertThat(removed.getStatus().getMessage()).isEqualTo("block_hashes cannot be empty");
    }

    @Test
    void shouldRejectAnEmptyQueryAsInvalidArgument() {
        Status status = status(() -> stub.queryPrefixBlocks(query("ns")));
        assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(status.getDescription()).isEqualTo("block_hashes cannot be empty");
    }

    @Test
    void shouldRejectMalformedNodeIds() {
        for (String bad : new String[] {"", "not-a-uuid", "1-2-3-4-5", UUID.randomUUID() + "x"}) {
            Status status = status(() -> stub.heartbeatNode(HeartbeatNodeRequest.newBuilder()
                    .setNode(NODE)
                    .setNodeId(bad)
                    .build()));
            assertThat(status.getCode()).as(bad).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(status.getDescription()).startsWith("invalid node_id: expected a UUID");
        }
        // The other spellings the reference's uuid crate accepts name the same session.
        String simple = id.toString().replace("-", "");
        stub.heartbeatNode(HeartbeatNodeRequest.newBuilder()
                .setNode(NODE)
                .setNodeId(simple.toUpperCase(Locale.ROOT))
                .build());
        stub.heartbeatNode(HeartbeatNodeRequest.newBuilder()
                .setNode(NODE)
                .setNodeId("urn:uuid:" + id)
                .build());
    }

    @Test
    void shouldRejectEmptyOrMalformedNodes() {
        Status empty = status(() -> stub.heartbeatNode(heartbeat("", UUID.randomUUID())));
        assertThat(empty.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(empty.getDescription())
                .isEqualTo("invalid node: node cannot be empty (expected the server's" + " advertised host:port)");
        for (String bad : new String[] {"10.0.0.1", "10.0.0.1:", ":50055", "10.0.0.1:0", "10.0.0.1:99999", "a b:1"}) {
            Status status = status(() -> stub.insertBlockHashes(insert("ns", bad, id, h(1))));
            assertThat(status.getCode()).as(bad).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(status.getDescription()).as(bad).startsWith("invalid node: expected host:port");
        }
        stub.heartbeatNode(heartbeat("[fd00::1]:50055", UUID.randomUUID())); // IPv6 is fine
    }

    @Test
    void shouldRejectBatchesOverTheConfiguredLimitWithAHint() {
        InsertBlockHashesRequest.Builder big = InsertBlockHashesRequest.newBuilder()
                .setNamespace("ns")
                .setNode(NODE)
                .setNodeId(id.toString());
        QueryPrefixBlocksRequest.Builder bigQuery =
                QueryPrefixBlocksRequest.newBuilder().setNamespace("ns");
        for (int i = 0; i < 1001; i++) {
            big.addBlockHashes(h(i));
            bigQuery.addBlockHashes(h(i));
        }
        for (Runnable call : new Runnable[] {
            () -> stub.insertBlockHashes(big.build()), () -> stub.queryPrefixBlocks(bigQuery.build())
        }) {
            Status status = status(call);
            assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(status.getDescription())
                    .isEqualTo("block_hashes has 1001 entries; at most 1000 are accepted per request"
                            + " (pega.metaserver.max-hashes-per-request): split the batch");
        }
        InsertBlockHashesRequest atLimit = big.clone()
                .clearBlockHashes()
                .addAllBlockHashes(big.getBlockHashesList().subList(0, 1000))
                .build();
        assertThat(stub.insertBlockHashes(atLimit).getInsertedCount()).isEqualTo(1000);
    }

    @Test
    void shouldRejectMessagesLargerThanTheGrpcLimit() {
        // 5 MiB in a few large hashes: refused by the transport before any handler runs.
        InsertBlockHashesRequest.Builder huge = InsertBlockHashesRequest.newBuilder()
                .setNamespace("ns")
                .setNode(NODE)
                .setNodeId(id.toString());
        for (int i = 0; i < 5; i++) {
            huge.addBlockHashes(ByteString.copyFrom(new byte[1 << 20]));
        }
        assertThat(status(() -> stub.insertBlockHashes(huge.build())).getCode())
                .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    }

    @Test
    void shouldRejectEmptyOrOversizedHashesAndNamespaces() {
        Status emptyHash = status(() -> stub.insertBlockHashes(insert("ns", NODE, id, h(1), ByteString.EMPTY)));
        assertThat(emptyHash.getDescription()).isEqualTo("block_hashes[1] is empty");

        Status longHash =
                status(() -> stub.insertBlockHashes(insert("ns", NODE, id, ByteString.copyFrom(new byte[300]))));
        assertThat(longHash.getDescription())
                .isEqualTo(
                        "block_hashes[0] is 300 bytes long; at most 256 are accepted (pega.metaserver.max-hash-bytes)");

        Status longNamespace = status(() -> stub.queryPrefixBlocks(query("n".repeat(1025), h(1))));
        assertThat(longNamespace.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(longNamespace.getDescription()).startsWith("namespace is 1025 characters long; at most 1024");
    }

    @Test
    void shouldRejectWritesFromUnregisteredNodes() {
        Status status = status(() -> stub.insertBlockHashes(insert("ns", "10.9.9.9:1", UUID.randomUUID(), h(1))));
        assertThat(status.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(status.getDescription()).isEqualTo("unknown node");
    }
}
