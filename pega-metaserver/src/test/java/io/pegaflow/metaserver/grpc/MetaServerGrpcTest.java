package io.pegaflow.metaserver.grpc;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static io.pegaflow.metaserver.grpc.Requests.prefixes;
import static io.pegaflow.metaserver.grpc.Requests.query;
import static io.pegaflow.metaserver.grpc.Requests.remove;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.entry;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.proto.InsertBlockHashesResponse;
import io.pegaflow.proto.MetaServerGrpc.MetaServerBlockingStub;
import io.pegaflow.proto.UnregisterNodeRequest;
import java.nio.file.Path;
import java.time.Duration;
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
 * The metaserver over real gRPC on an ephemeral port with its H2 file database: several nodes, prefix lengths,
 * staleness driven by the injected clock, takeover and fencing, owner-matched removal, unregister. Each test uses
 * its own node addresses and namespace, so they share one process.
 */
@Tag("integration")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaServerGrpcTest {

    static final Metadata.Key<String> EPOCH =
            Metadata.Key.of("pega-metaserver-epoch", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> FENCED =
            Metadata.Key.of("pega-metaserver-fenced", Metadata.ASCII_STRING_MARSHALLER);

    @TempDir
    static Path dir;

    final AdjustableClock clock = new AdjustableClock();
    MetaserverTestApp app;
    MetaServerBlockingStub stub;

    @BeforeAll
    void start() {
        app = MetaserverTestApp.start(dir, clock);
        stub = app.stub();
    }

    @AfterAll
    void stop() {
        if (app != null) {
            app.close();
        }
    }

    static Status.Code code(Runnable call) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, call::run);
        assertThat(e).as("expected a gRPC error").isNotNull();
        return e.getStatus().getCode();
    }

    static String description(Runnable call) {
        return catchThrowableOfType(StatusRuntimeException.class, call::run)
                .getStatus()
                .getDescription();
    }

    @Test
    void shouldIndexSeveralNodesAndReportEachPrefix() {
        String a = "10.1.0.1:50055";
        String b = "10.1.0.2:50055";
        String c = "10.1.0.3:50055";
        UUID ida = UUID.randomUUID();
        UUID idb = UUID.randomUUID();
        UUID idc = UUID.randomUUID();
        assertThat(stub.heartbeatNode(heartbeat(a, ida)).getStaleAfterSecs()).isEqualTo(30);
        stub.heartbeatNode(heartbeat(b, idb));
        stub.heartbeatNode(heartbeat(c, idc));

        InsertBlockHashesResponse inserted = stub.insertBlockHashes(insert("ns1", a, ida, h(1), h(2), h(3), h(4)));
        assertThat(inserted.getStatus().getOk()).isTrue();
        assertThat(inserted.getStatus().getMessage()).isEmpty();
        assertThat(inserted.getInsertedCount()).isEqualTo(4);
        stub.insertBlockHashes(insert("ns1", b, idb, h(1), h(2), h(3), h(5)));
        stub.insertBlockHashes(insert("ns1", c, idc, h(1), h(2)));
        stub.insertBlockHashes(insert("ns2", c, idc, h(1), h(2), h(3), h(4)));

        assertThat(prefixes(stub.queryPrefixBlocks(query("ns1", h(1), h(2), h(3), h(4)))))
                .containsOnly(entry(a, 4), entry(b, 3), entry(c, 2));
        assertThat(prefixes(stub.queryPrefixBlocks(query("ns2", h(1), h(2), h(3), h(4)))))
                .containsOnly(entry(c, 4));
        assertThat(prefixes(stub.queryPrefixBlocks(query("ns1", h(9), h(1))))).isEmpty();

        // Owner-matched removal: only A's records go; a wrong-id remove is fenced.
        assertThat(stub.removeBlockHashes(remove("ns1", a, ida, h(2), h(7))).getRemovedCount())
                .isEqualTo(1);
        assertThat(prefixes(stub.queryPrefixBlocks(query("ns1", h(1), h(2), h(3), h(4)))))
                .containsOnly(entry(a, 1), entry(b, 3), entry(c, 2));
        assertThat(code(() -> stub.removeBlockHashes(remove("ns1", a, UUID.randomUUID(), h(1)))))
                .isEqualTo(Status.Code.FAILED_PRECONDITION);
    }

    @Test
    void shouldHideANodeThatWentStaleUntilItIsSeenAgain() {
        String quiet = "10.2.0.1:50055";
        String busy = "10.2.0.2:50055";
        UUID idq = UUID.randomUUID();
        UUID idb = UUID.randomUUID();
        stub.heartbeatNode(heartbeat(quiet, idq));
        stub.heartbeatNode(heartbeat(busy, idb));
        stub.insertBlockHashes(insert("stale", quiet, idq, h(1), h(2)));
        stub.insertBlockHashes(insert("stale", busy, idb, h(1)));

        clock.advance(Duration.ofSeconds(31));
        stub.heartbeatNode(heartbeat(busy, idb));
        assertThat(prefixes(stub.queryPrefixBlocks(query("stale", h(1), h(2))))).containsOnly(entry(busy, 1));

        stub.heartbeatNode(heartbeat(quiet, idq)); // same id: revived, its blocks visible again
        assertThat(prefixes(stub.queryPrefixBlocks(query("stale", h(1), h(2)))))
                .containsOnly(entry(busy, 1), entry(quiet, 2));
    }

    @Test
    void shouldLetANewNodeIdTakeOverOnlyAfterTheOldSessionWentStale() {
        String node = "10.3.0.1:50055";
        UUID old = UUID.randomUUID();
        UUID fresh = UUID.randomUUID();
        stub.heartbeatNode(heartbeat(node, old));
        stub.insertBlockHashes(insert("takeover", node, old, h(1), h(2)));

        assertThat(description(() -> stub.heartbeatNode(heartbeat(node, fresh))))
                .isEqualTo("stale node session");
        clock.advance(Duration.ofSeconds(31));
        stub.heartbeatNode(heartbeat(node, fresh));

        // The old session's blocks vanish with it; its requests are refused with the reference's text.
        assertThat(prefixes(stub.queryPrefixBlocks(query("takeover", h(1))))).isEmpty();
        for (Runnable call : new Runnable[] {
            () -> stub.insertBlockHashes(insert("takeover", node, old, h(3))),
            () -> stub.removeBlockHashes(remove("takeover", node, old, h(1))),
            () -> stub.heartbeatNode(heartbeat(node, old)),
            () -> stub.unregisterNode(UnregisterNodeRequest.newBuilder()
                    .setNode(node)
                    .setNodeId(old.toString())
                    .build())
        }) {
            StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, call::run);
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
            assertThat(e.getStatus().getDescription()).isEqualTo("stale node session");
        }
    }

    @Test
    void shouldMarkAFencedNodeIdInTheTrailers() {
        String node = "10.4.0.1:50055";
        UUID old = UUID.randomUUID();
        stub.heartbeatNode(heartbeat(node, old));
        clock.advance(Duration.ofSeconds(31));
        stub.heartbeatNode(heartbeat(node, UUID.randomUUID()));
        clock.advance(Duration.ofMinutes(5)); // the new session is stale too: the reference would let `old` back

        assertThat(code(() -> stub.heartbeatNode(heartbeat(node, old)))).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(app.lastTrailers().get(FENCED)).isEqualTo("true");
    }

    @Test
    void shouldUnregisterAndDropTheNodesRecords() {
        String node = "10.5.0.1:50055";
        UUID id = UUID.randomUUID();
        UnregisterNodeRequest unregister = UnregisterNodeRequest.newBuilder()
                .setNode(node)
                .setNodeId(id.toString())
                .build();
        assertThat(description(() -> stub.unregisterNode(unregister))).isEqualTo("unknown node");
        stub.heartbeatNode(heartbeat(node, id));
        stub.insertBlockHashes(insert("unreg", node, id, h(1), h(2), h(3)));

        assertThat(stub.unregisterNode(unregister).getRemovedOwners()).isEqualTo(3);
        assertThat(prefixes(stub.queryPrefixBlocks(query("unreg", h(1))))).isEmpty();
        assertThat(description(() -> stub.insertBlockHashes(insert("unreg", node, id, h(1)))))
                .isEqualTo("unknown node");
    }

    @Test
    void shouldSendTheEpochOnSuccessAndOnError() {
        stub.queryPrefixBlocks(query("epoch", h(1)));
        String epoch = app.lastHeaders().get(EPOCH);
        assertThat(epoch).matches("[1-9][0-9]*");

        code(() -> stub.queryPrefixBlocks(query("epoch")));
        assertThat(app.lastTrailers().get(EPOCH)).isEqualTo(epoch);
    }
}
