package io.pegaflow.metaserver.grpc;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static io.pegaflow.metaserver.grpc.Requests.prefixes;
import static io.pegaflow.metaserver.grpc.Requests.query;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.metaserver.index.BlockIndex;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.metaserver.support.RedisServer;
import io.pegaflow.proto.MetaServerGrpc;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One node cannot evict another's index through {@code max-blocks} (decision 0030 §2): with {@code max-blocks=4000} and
 * the default share (a quarter, 1000 records a node), a victim node indexes 1000 hashes and an outsider's node inserts
 * 12 000 fresh ones. The victim's whole prefix is still answered; the outsider keeps only its newest 1000. The victim's
 * own inserts past its share drop its own oldest records. Before the share, the size bound evicted the victim's keys
 * with everyone else's and its prefix query answered nothing. Run on both index backends (Redis: a real
 * {@code redis-server}, skipped with a message when it is not installed).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaServerNodeShareTest {
    private static final String NS = "ns-share";
    private static final String VICTIM = "10.77.0.1:50055";
    private static final String OUTSIDER = "10.77.0.2:50055";

    @TempDir
    Path dir;

    RedisServer redis;

    @AfterEach
    void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void shouldKeepEveryOtherNodesKeysWhenOneNodeInsertsPastItsShare(String backend) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "--pega.metaserver.max-blocks=4000",
                "--logging.level.root=WARN",
                "--pega.metaserver.index=" + backend));
        if (backend.equals("redis")) {
            redis = RedisServer.start(dir);
            args.add("--pega.metaserver.redis.uri=" + redis.uri());
        }
        try (MetaserverTestApp app = MetaserverTestApp.start(dir, new AdjustableClock(), args.toArray(String[]::new))) {
            MetaServerGrpc.MetaServerBlockingStub stub = app.stub().withDeadlineAfter(30, TimeUnit.SECONDS);
            UUID victim = UUID.randomUUID();
            UUID outsider = UUID.randomUUID();
            stub.heartbeatNode(heartbeat(VICTIM, victim));
            stub.heartbeatNode(heartbeat(OUTSIDER, outsider));
            stub.insertBlockHashes(insert(NS, VICTIM, victim, hashes(0, 1000)));

            for (int round = 0; round < 6; round++) {
                long first = 1_000_000L + round * 2000L;
                stub.insertBlockHashes(insert(NS, OUTSIDER, outsider, hashes(first, 2000)));
            }
            BlockIndex index = app.bean(BlockIndex.class);
            index.cleanUp();

            assertThat(prefixes(stub.queryPrefixBlocks(query(NS, hashes(0, 1000)))))
                    .as("the victim's whole prefix")
                    .isEqualTo(Map.of(VICTIM, 1000));
            assertThat(prefixes(stub.queryPrefixBlocks(query(NS, hashes(1_000_000L + 11_000, 1000)))))
                    .as("the outsider's newest share")
                    .isEqualTo(Map.of(OUTSIDER, 1000));
            assertThat(stub.queryPrefixBlocks(query(NS, hashes(1_000_000L, 1))).getNodesCount())
                    .as("the outsider's oldest, dropped for its own newer ones")
                    .isZero();
            assertThat(index.shareEvictedRecords()).isEqualTo(11_000);

            // past its share the victim loses its own oldest, not the outsider's
            stub.insertBlockHashes(insert(NS, VICTIM, victim, hashes(1000, 200)));
            assertThat(stub.queryPrefixBlocks(query(NS, hashes(0, 1))).getNodesCount())
                    .isZero();
            assertThat(prefixes(stub.queryPrefixBlocks(query(NS, hashes(200, 1000)))))
                    .isEqualTo(Map.of(VICTIM, 1000));
            assertThat(prefixes(stub.queryPrefixBlocks(query(NS, hashes(1_000_000L + 11_000, 1000)))))
                    .isEqualTo(Map.of(OUTSIDER, 1000));
        }
    }

    private static ByteString[] hashes(long first, int count) {
        ByteString[] out = new ByteString[count];
        for (int i = 0; i < count; i++) {
            out[i] = h(first + i);
        }
        return out;
    }
}
