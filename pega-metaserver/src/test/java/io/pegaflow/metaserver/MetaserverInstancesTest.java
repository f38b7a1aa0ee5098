package io.pegaflow.metaserver;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static io.pegaflow.metaserver.grpc.Requests.prefixes;
import static io.pegaflow.metaserver.grpc.Requests.query;
import static io.pegaflow.metaserver.grpc.Requests.remove;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.ByteString;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.metaserver.node.NodeRegistry;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.Databases;
import io.pegaflow.metaserver.support.Databases.PostgresSchema;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.metaserver.support.RedisServer;
import io.pegaflow.proto.ext.MetaserverMetadata;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two metaserver instances at once over one database (PostgreSQL when {@code PEGA_TEST_POSTGRES_URL} is set, else one
 * H2 file both open) and, for {@code index=redis}, one real {@code redis-server}: they answer the same index epoch and
 * the same prefixes; the instance a node talks to is stopped hard and the node continues on the other with the same
 * node_id; a takeover on one fences the old id on both, across a restart; repeated writes are idempotent. With
 * {@code index=memory} each instance answers its own epoch and holds only what was announced to it, so the node must
 * re-announce after the move.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaserverInstancesTest {

    static final String NODE = "10.61.0.1:50055";
    static final String NS = "ns-instances";

    @TempDir
    Path dir;

    final AdjustableClock clock = new AdjustableClock();
    final List<AutoCloseable> resources = new ArrayList<>();
    String[] database = new String[0];

    @AfterEach
    void closeAll() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    void shareOneDatabase() throws Exception {
        String postgres = Databases.postgresUrl();
        if (postgres != null) {
            PostgresSchema schema = PostgresSchema.create(postgres);
            resources.add(schema);
            database = new String[] {"--spring.profiles.active=postgres", "--spring.datasource.url=" + schema.url()};
        }
    }

    MetaserverTestApp instance(String... index) {
        List<String> args = new ArrayList<>(List.of(database));
        args.addAll(List.of(index));
        MetaserverTestApp app = MetaserverTestApp.start(dir, clock, args.toArray(String[]::new));
        resources.add(app);
        return app;
    }

    static ByteString[] hashes(int count) {
        ByteString[] out = new ByteString[count];
        for (int i = 0; i < count; i++) {
            out[i] = h(i);
        }
        return out;
    }

    static Status refusal(Runnable call) {
        return catchThrowableOfType(StatusRuntimeException.class, call::run).getStatus();
    }

    static String epoch(MetaserverTestApp app) {
        return app.lastHeaders().get(MetaserverMetadata.EPOCH_KEY);
    }

    @Test
    void shouldKeepAnsweringFromRedisWhenTheInstanceANodeTalksToStops() throws Exception {
        shareOneDatabase();
        RedisServer redis = RedisServer.start(dir);
        resources.add(redis);
        String[] index = {"--pega.metaserver.index=redis", "--pega.metaserver.redis.uri=" + redis.uri()};
        MetaserverTestApp a = instance(index);
        MetaserverTestApp b = instance(index);

        UUID node = UUID.randomUUID();
        a.stub().heartbeatNode(heartbeat(NODE, node));
        String epochA = epoch(a);
        assertThat(a.stub()
                        .insertBlockHashes(insert(NS, NODE, node, hashes(100)))
                        .getInsertedCount())
                .isEqualTo(100);
        b.bean(NodeRegistry.class).refreshFromStore(); // what node-refresh-secs does on its own
        assertThat(prefixes(b.stub().queryPrefixBlocks(query(NS, hashes(100))))).isEqualTo(Map.of(NODE, 100));
        assertThat(epoch(b))
                .as("one index, one epoch: no re-announcement on a move")
                .isEqualTo(epochA);

        a.close(); // hard stop of the instance the node talks to

        // the node moves: same node_id, a heartbeat re-registers it, its blocks are still there
        b.stub().heartbeatNode(heartbeat(NODE, node));
        assertThat(epoch(b)).isEqualTo(epochA);
        assertThat(prefixes(b.stub().queryPrefixBlocks(query(NS, hashes(100))))).isEqualTo(Map.of(NODE, 100));

        // a retry of an acknowledged write after the move changes nothing
        b.stub().insertBlockHashes(insert(NS, NODE, node, hashes(100)));
        assertThat(b.bean(io.pegaflow.metaserver.index.BlockIndex.class).ownerCount())
                .isEqualTo(100);
        assertThat(b.stub().removeBlockHashes(remove(NS, NODE, node, h(99))).getRemovedCount())
                .isEqualTo(1);
        assertThat(b.stub().removeBlockHashes(remove(NS, NODE, node, h(99))).getRemovedCount())
                .isZero();

        // a takeover on B fences the old id for every instance, including one started later
        clock.advance(Duration.ofSeconds(31));
        UUID successor = UUID.randomUUID();
        b.stub().heartbeatNode(heartbeat(NODE, successor));
        assertFenced(() -> b.stub().heartbeatNode(heartbeat(NODE, node)), b);
        MetaserverTestApp restarted = instance(index);
        assertFenced(() -> restarted.stub().heartbeatNode(heartbeat(NODE, node)), restarted);
        assertThat(refusal(() -> restarted.stub().insertBlockHashes(insert(NS, NODE, node, h(0))))
                        .getDescription())
                .isEqualTo("stale node session");
        assertThat(restarted.stub().queryPrefixBlocks(query(NS, hashes(1))).getNodesCount())
                .as("the fenced session's records are hidden everywhere")
                .isZero();
        restarted.stub().insertBlockHashes(insert(NS, NODE, successor, hashes(10)));
        assertThat(prefixes(b.stub().queryPrefixBlocks(query(NS, hashes(10))))).isEqualTo(Map.of(NODE, 10));
    }

    @Test
    void shouldNeedAReannouncementWhenEachInstanceHoldsItsOwnMemoryIndex() throws Exception {
        shareOneDatabase();
        MetaserverTestApp a = instance();
        MetaserverTestApp b = instance();

        UUID node = UUID.randomUUID();
        a.stub().heartbeatNode(heartbeat(NODE, node));
        a.stub().insertBlockHashes(insert(NS, NODE, node, hashes(50)));
        String epochA = epoch(a);
        a.close();

        // the other instance knows the session from the database (Insert works before any heartbeat there)...
        b.stub().insertBlockHashes(insert(NS, NODE, node, h(1000)));
        assertThat(epoch(b)).as("another epoch: the client re-announces").isNotEqualTo(epochA);
        // ...but not the blocks, until they are announced again
        assertThat(b.stub().queryPrefixBlocks(query(NS, hashes(50))).getNodesCount())
                .isZero();
        b.stub().insertBlockHashes(insert(NS, NODE, node, hashes(50)));
        assertThat(prefixes(b.stub().queryPrefixBlocks(query(NS, hashes(50))))).isEqualTo(Map.of(NODE, 50));
    }

    private static void assertFenced(Runnable call, MetaserverTestApp app) {
        Status refused = refusal(call);
        assertThat(refused.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(refused.getDescription()).isEqualTo("stale node session");
        Metadata trailers = app.lastTrailers();
        assertThat(trailers.get(MetaserverMetadata.FENCED_KEY)).isEqualTo(MetaserverMetadata.FENCED_VALUE);
    }
}
