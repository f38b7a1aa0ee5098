package io.pegaflow.server.internode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.pegaflow.core.engine.BlockIndexListener;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.NanoClock;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The metaserver client against an in-test MetaServer over real gRPC: batched announcements, re-announcement on a
 * new epoch, non-blocking drops while the metaserver is down, recovery, session resets, fencing, unregister.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetaserverClientTest {

    static final String NODE = "10.20.0.1:50055";
    static final Duration WAIT = Duration.ofSeconds(10);

    FakeMetaServer metaserver;
    final AtomicReference<BlockIndexListener.ResidentBlocks> resident = new AtomicReference<>();
    final List<MetaserverClient> clients = new ArrayList<>();

    @BeforeEach
    void startMetaserver() throws Exception {
        metaserver = new FakeMetaServer();
    }

    @AfterEach
    void stop() throws Exception {
        clients.forEach(MetaserverClient::close);
        metaserver.close();
    }

    MetaserverClient client(String target, int queueDepth, int batchSize) {
        return client(target, queueDepth, batchSize, Duration.ofMillis(100));
    }

    MetaserverClient client(String target, int queueDepth, int batchSize, Duration heartbeatInterval) {
        MetaserverClientSettings settings = new MetaserverClientSettings(
                target,
                NODE,
                queueDepth,
                heartbeatInterval,
                Duration.ofSeconds(2),
                batchSize,
                Duration.ofMillis(20),
                Duration.ofMillis(200));
        MetaserverClient client = new MetaserverClient(settings, resident::get).start();
        clients.add(client);
        return client;
    }

    MetaserverClient client() {
        return client(metaserver.target(), 256, 1024);
    }

    static byte[] h(int i) {
        return ByteBuffer.allocate(32).putInt(i).putInt(~i).array();
    }

    static List<byte[]> hashes(int from, int to) {
        List<byte[]> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            out.add(h(i));
        }
        return out;
    }

    /** Resident blocks as an engine would report them: batches of {@code batchSize}, per namespace. */
    static BlockIndexListener.ResidentBlocks residentOf(String namespace, List<byte[]> all) {
        return (batchSize, sink) -> {
            for (int from = 0; from < all.size(); from += batchSize) {
                sink.onSealed(namespace, all.subList(from, Math.min(from + batchSize, all.size())));
            }
        };
    }

    @Test
    void shouldAnnounceSealedAndEvictedBlocksInBatches() {
        MetaserverClient client = client(metaserver.target(), 256, 100);
        await().atMost(WAIT)
                .until(() -> NODE.equals(
                        metaserver.sessions.keySet().stream().findFirst().orElse(null)));
        assertThat(metaserver.sessions).containsEntry(NODE, client.nodeId().toString());

        client.onSealed("ns", hashes(0, 250));
        client.onSealed("other", hashes(0, 1));
        await().atMost(WAIT).until(() -> metaserver.blocks.size() == 251);
        assertThat(metaserver.insertSizes).allMatch(size -> size <= 100);

        client.onEvicted("ns", hashes(0, 10));
        await().atMost(WAIT).until(() -> metaserver.blocks.size() == 241);
        assertThat(metaserver.blocks).doesNotContain(FakeMetaServer.key("ns", h(0)));
        assertThat(client.stats().registrationBlocks()).isEqualTo(251);
        assertThat(client.stats().removalBlocks()).isEqualTo(10);
        assertThat(client.stats().registrationFailures()).isZero();
    }

    @Test
    void shouldReannounceResidentBlocksWhenTheMetaserverRestarts() {
        List<byte[]> residentHashes = hashes(0, 2500);
        resident.set(residentOf("ns", residentHashes));
        MetaserverClient client = client(metaserver.target(), 256, 1024);

        // First contact counts as a new epoch: whatever is resident is announced.
        await().atMost(WAIT).until(() -> client.stats().reannouncements() == 1);
        assertThat(metaserver.blocks).hasSize(2500);
        assertThat(metaserver.insertSizes).allMatch(size -> size <= 1024);

        metaserver.restart(); // new epoch, index lost
        assertThat(metaserver.blocks).isEmpty();
        await().atMost(WAIT).until(() -> client.stats().reannouncements() == 2);
        assertThat(metaserver.blocks).hasSize(2500);
        assertThat(client.metaserverEpoch()).isEqualTo(2);
        assertThat(client.stats().reannouncedBlocks()).isEqualTo(5000);
    }

    @Test
    void shouldDropAndCountInsteadOfBlockingWhenTheMetaserverIsDown() throws Exception {
        metaserver.close();
        // A black hole rather than a closed port: the TCP handshake completes (the kernel's backlog) but nothing ever
        // answers, so a client that waited on the network would spend its whole RPC timeout (2 s) on a call.
        try (ServerSocket blackHole = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            MetaserverClient client = client("127.0.0.1:" + blackHole.getLocalPort(), 4, 1024);

            long start = System.nanoTime();
            for (int i = 0; i < 2_000; i++) {
                client.onSealed("ns", hashes(i, i + 1));
            }
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertThat(elapsedMs)
                    .as("2000 announcements must not wait for the network (one such wait is 2 s)")
                    .isLessThan(10_000);
            assertThat(client.stats().registrationQueueFull()).isPositive();
            assertThat(client.stats().registrationBlocks() + client.stats().registrationQueueFull())
                    .isEqualTo(2_000);
            await().atMost(WAIT).until(() -> client.stats().heartbeatFailures() >= 2);
        }
    }

    @Test
    void shouldRecoverWithBackoffAfterAnOutage() {
        metaserver.failure = Status.UNAVAILABLE.withDescription("down for maintenance");
        MetaserverClient client = client();
        await().atMost(WAIT).until(() -> client.stats().heartbeatFailures() >= 3);
        client.onSealed("ns", hashes(0, 5)); // dropped: in backoff or refused
        await().atMost(WAIT).until(() -> client.stats().registrationFailures() == 5);

        metaserver.failure = null;
        await().atMost(WAIT).until(() -> metaserver.sessions.containsKey(NODE));
        client.onSealed("ns", hashes(5, 8));
        await().atMost(WAIT).until(() -> metaserver.blocks.size() == 3);
    }

    @Test
    void shouldHeartbeatAgainWithTheSameIdAfterItsSessionWasRefused() {
        // No periodic heartbeat may re-register the node between the reset below and the refused insert.
        MetaserverClient client = client(metaserver.target(), 256, 1024, Duration.ofSeconds(30));
        await().atMost(WAIT).until(() -> metaserver.sessions.containsKey(NODE));
        metaserver.sessions.clear(); // a metaserver that forgot the node (the reference after a restart)

        client.onSealed("ns", hashes(0, 3)); // refused with "unknown node": dropped, session reset
        await().atMost(WAIT).until(() -> client.stats().sessionResets() == 1);
        await().atMost(WAIT).until(() -> client.nodeId().toString().equals(metaserver.sessions.get(NODE)));
        client.onSealed("ns", hashes(3, 4));
        await().atMost(WAIT).until(() -> metaserver.blocks.contains(FakeMetaServer.key("ns", h(3))));
        assertThat(client.stats().registrationFailures()).isEqualTo(3);
    }

    @Test
    void shouldKeepTryingButAnnounceNothingWhenFenced() {
        MetaserverClient client = client();
        await().atMost(WAIT).until(() -> metaserver.sessions.containsKey(NODE));
        metaserver.fenced.add(client.nodeId().toString());
        metaserver.sessions.put(NODE, "someone-else");

        await().atMost(WAIT).until(() -> client.stats().sessionResets() >= 2);
        client.onSealed("ns", hashes(0, 2));
        await().atMost(WAIT).until(() -> client.stats().registrationFailures() == 2);
        assertThat(metaserver.blocks).isEmpty();
    }

    @Test
    void shouldUnregisterOnCloseAndDropLaterAnnouncements() {
        MetaserverClient client = client();
        await().atMost(WAIT).until(() -> metaserver.sessions.containsKey(NODE));

        client.close();
        client.close(); // idempotent

        assertThat(metaserver.unregistered).containsExactly(client.nodeId().toString());
        assertThat(metaserver.sessions).doesNotContainKey(NODE);
        client.onSealed("ns", hashes(0, 2));
        assertThat(client.stats().registrationQueueFull()).isEqualTo(2);
    }

    @Test
    void shouldReportItsAgentToTheProcessHealthUntilClosed() {
        AgentGroup agents = new AgentGroup();
        MetaserverClientSettings settings = MetaserverClientSettings.of(
                metaserver.target(), NODE, 16, Duration.ofMillis(100), Duration.ofSeconds(2), 1024);
        MetaserverClient client = new MetaserverClient(settings, resident::get, NanoClock.SYSTEM, agents).start();

        assertThat(agents.statuses())
                .extracting(AgentGroup.Status::roleName, AgentGroup.Status::state, AgentGroup.Status::failure)
                .containsExactly(tuple("pega-metaserver-client", AgentRunner.State.RUNNING, ""));
        client.close();
        assertThat(agents.statuses()).isEmpty();
    }
}
