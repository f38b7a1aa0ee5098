package io.pegaflow.it;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.proto.NodePrefixResult;
import io.pegaflow.proto.QueryPrefixBlocksRequest;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.ChildJvm;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped jars as operators run them, each in its own process: a pega-server announces the blocks it seals to a
 * pega-metaserver; the metaserver is SIGKILLed and restarted on the same database, and the running server notices the
 * new epoch and announces again what it holds, without a restart of its own and without Save ever waiting for the
 * metaserver; a graceful server stop unregisters the node, so its blocks stop being offered to peers.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ClusterIndexIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String NAMESPACE = "it-ns";
    private static final KvLayout LAYOUT = KvLayout.contiguous(8, 16 * 1024);
    private static final List<String> LAYERS = List.of("layer_0", "layer_1");

    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private <T extends AutoCloseable> T track(T resource) {
        open.add(resource);
        return resource;
    }

    private ChildJvm startMetaserver(String name, int grpcPort, int httpPort, ManagedChannel channel)
            throws IOException {
        return track(MetaserverLauncher.start(
                name,
                dir,
                channel,
                grpcPort,
                httpPort,
                List.of("--pega.metaserver.db-path=" + dir.resolve("metaserver-db/metaserver"))));
    }

    private ChildJvm startServer(int grpcPort, int httpPort, int metaserverPort) throws IOException {
        List<String> args = List.of(
                "-jar",
                PackagedJars.path("pega.it.serverJar"),
                "--spring.grpc.server.port=" + grpcPort,
                "--server.port=" + httpPort,
                "--server.address=127.0.0.1",
                "--pega.pool.size=32MB",
                "--pega.device.backend=host",
                "--pega.metaserver.addr=127.0.0.1:" + metaserverPort,
                "--pega.metaserver.advertise-addr=127.0.0.1:" + grpcPort,
                "--pega.metaserver.allow-loopback=true",
                "--pega.metaserver.heartbeat-interval=200ms",
                "--logging.level.root=WARN",
                "--logging.level.io.pegaflow.server.internode=INFO");
        return track(ChildJvm.start("pega-server", dir, args, ChildJvm.pegaServerReady(httpPort)));
    }

    /** The metaserver's answer: the owners of a prefix of {@code hashes}, by advertised address. */
    private static List<NodePrefixResult> owners(MetaServerGrpc.MetaServerBlockingStub stub, List<ByteString> hashes) {
        return stub.withDeadlineAfter(5, TimeUnit.SECONDS)
                .queryPrefixBlocks(QueryPrefixBlocksRequest.newBuilder()
                        .setNamespace(NAMESPACE)
                        .addAllBlockHashes(hashes)
                        .build())
                .getNodesList();
    }

    private static boolean ownsPrefix(
            MetaServerGrpc.MetaServerBlockingStub stub, List<ByteString> hashes, String node, int length) {
        try {
            return owners(stub, hashes).stream().anyMatch(r -> r.getNode().equals(node) && r.getPrefixLen() == length);
        } catch (StatusRuntimeException metaserverDown) {
            return false;
        }
    }

    @Test
    void shouldReannounceToARestartedMetaserverAndUnregisterOnStop() throws Exception {
        int[] ports = ChildJvm.freePorts(4);
        int metaGrpc = ports[0];
        int metaHttp = ports[1];
        int serverGrpc = ports[2];
        int serverHttp = ports[3];
        String node = "127.0.0.1:" + serverGrpc;
        ManagedChannel metaChannel = ManagedChannelBuilder.forAddress("127.0.0.1", metaGrpc)
                .usePlaintext()
                .build();
        track(metaChannel::shutdownNow);
        MetaServerGrpc.MetaServerBlockingStub meta = MetaServerGrpc.newBlockingStub(metaChannel);
        BlockPattern pattern = BlockPattern.perByte(77);
        List<ByteString> before = BlockPattern.hashes(1, 4);
        List<ByteString> during = BlockPattern.hashes(2, 4);

        ChildJvm metaserver = startMetaserver("metaserver", metaGrpc, metaHttp, metaChannel);
        ChildJvm server = startServer(serverGrpc, serverHttp, metaGrpc);
        try (MockScheduler scheduler = MockScheduler.connect("127.0.0.1", serverGrpc);
                MockVllmWorker worker = MockVllmWorker.builder("127.0.0.1", serverGrpc)
                        .instanceId("it-worker")
                        .namespace(NAMESPACE)
                        .sharedLayers(LAYERS, LAYOUT)
                        .build()) {
            worker.register();
            worker.fillBlocks(blockIds(8), pattern);
            worker.save(blockIds(4), before);
            scheduler.awaitSealed("it-worker", before, WAIT);
            await().atMost(WAIT).until(() -> ownsPrefix(meta, before, node, 4));

            // The metaserver dies with everything in its memory; Save goes on at once meanwhile.
            assertThat(metaserver.kill()).isEqualTo(137);
            worker.save(blockIds(4, 8), during);
            scheduler.awaitSealed("it-worker", during, WAIT);

            startMetaserver("metaserver-restarted", metaGrpc, metaHttp, metaChannel);
            // Its index starts empty; the server sees the new epoch and announces both batches again.
            List<ByteString> all = new ArrayList<>(before);
            all.addAll(during);
            try {
                await().atMost(WAIT).until(() -> ownsPrefix(meta, all, node, 8));
            } catch (RuntimeException | AssertionError e) {
                throw server.failure("no re-announcement after the metaserver restart", e);
            }
            // The agent logs the re-announcement after its last insert returned, so the metaserver can show all
            // eight blocks a moment before the line reaches the child's log.
            await().atMost(WAIT).until(() -> server.logText().contains("resident blocks to metaserver epoch"));

            // A graceful stop unregisters the node: its blocks are no longer offered to peers.
            // 143 = 128 + SIGTERM: the JVM's status once its shutdown hooks (Spring's graceful close) have run.
            assertThat(server.stop(Duration.ofSeconds(60))).isEqualTo(143);
            assertThat(owners(meta, all)).isEmpty();
            assertThat(server.logText()).contains("Unregistered from metaserver: node=" + node);
        }
    }
}
