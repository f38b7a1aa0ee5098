package io.pegaflow.metaserver;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static io.pegaflow.metaserver.grpc.Requests.prefixes;
import static io.pegaflow.metaserver.grpc.Requests.query;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.StatusRuntimeException;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.metaserver.support.RedisCluster;
import io.pegaflow.metaserver.support.RedisServer;
import io.pegaflow.proto.MetaServerGrpc;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Redis index on a real Redis Cluster (three masters, three replicas, {@code cluster-node-timeout} 1 s): a node's
 * 300 blocks spread over every master; one master is SIGKILLed after its replica caught up; the replica is promoted
 * and QueryPrefixBlocks answers the whole prefix again within 20 s of the kill (4.7 s on the development VM: the node
 * timeout, the election, Lettuce's topology refresh), and from then on every time, without a re-announcement.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RedisClusterFailoverTest {

    static final String NODE = "10.62.0.1:50055";
    static final String NS = "ns-cluster";
    static final int BLOCKS = 300;

    @TempDir
    Path dir;

    @Test
    void shouldKeepAnsweringAfterAMasterDiesAndItsReplicaIsPromoted() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(dir);
                MetaserverTestApp app = MetaserverTestApp.start(
                        dir,
                        new AdjustableClock(),
                        "--pega.metaserver.index=redis",
                        "--pega.metaserver.redis.cluster-uris=" + String.join(",", cluster.uris()),
                        "--logging.level.io.lettuce=WARN")) {
            MetaServerGrpc.MetaServerBlockingStub stub = app.stub();
            UUID node = UUID.randomUUID();
            stub.heartbeatNode(heartbeat(NODE, node));
            ByteString[] hashes = new ByteString[BLOCKS];
            for (int i = 0; i < BLOCKS; i++) {
                hashes[i] = h(i);
            }
            stub.insertBlockHashes(insert(NS, NODE, node, hashes));
            assertThat(prefixes(stub.queryPrefixBlocks(query(NS, hashes)))).isEqualTo(Map.of(NODE, BLOCKS));

            List<RedisServer> masters = cluster.masters();
            assertThat(masters).hasSize(3);
            RedisServer victim = masters.get(0);
            cluster.awaitReplicated(victim, 10_000);
            long killedAt = System.nanoTime();
            victim.close(); // SIGKILL

            await().atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(200))
                    .ignoreException(StatusRuntimeException.class)
                    .until(() -> Map.of(NODE, BLOCKS)
                            .equals(prefixes(
                                    stub.withDeadlineAfter(5, TimeUnit.SECONDS).queryPrefixBlocks(query(NS, hashes)))));
            long recoveredMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            System.out.println("Redis Cluster: full prefix answered again " + recoveredMs + " ms after the kill");
            cluster.awaitState(20_000);
            assertThat(cluster.masters()).as("the replica took over").hasSize(3);
            for (int round = 0; round < 20; round++) {
                assertThat(prefixes(stub.queryPrefixBlocks(query(NS, hashes)))).isEqualTo(Map.of(NODE, BLOCKS));
            }
            // and it takes writes again on the promoted replica's slots
            stub.insertBlockHashes(insert(NS, NODE, node, h(BLOCKS)));
            ByteString[] longer = Arrays.copyOf(hashes, BLOCKS + 1);
            longer[BLOCKS] = h(BLOCKS);
            assertThat(prefixes(stub.queryPrefixBlocks(query(NS, longer)))).isEqualTo(Map.of(NODE, BLOCKS + 1));
        }
    }
}
