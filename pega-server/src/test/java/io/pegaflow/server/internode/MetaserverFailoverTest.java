package io.pegaflow.server.internode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.pegaflow.core.engine.BlockIndexListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client given two metaserver addresses (two in-test MetaServers over real gRPC): when the one it talks to goes away
 * it moves to the other, registers there, and re-announces its resident blocks only when that instance answers
 * another epoch (a memory index of its own), not when it serves the same index (Redis). Against pega-metaserver
 * processes the same runs in pega-it's {@code MetaserverFailoverIT}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetaserverFailoverTest {

    static final String NODE = "10.20.0.9:50055";
    static final Duration WAIT = Duration.ofSeconds(10);

    FakeMetaServer first;
    FakeMetaServer second;
    MetaserverClient client;
    final AtomicReference<BlockIndexListener.ResidentBlocks> resident = new AtomicReference<>();

    @BeforeEach
    void start() throws Exception {
        first = new FakeMetaServer();
        second = new FakeMetaServer();
        resident.set(MetaserverClientTest.residentOf("ns", MetaserverClientTest.hashes(0, 300)));
    }

    @AfterEach
    void stop() {
        if (client != null) {
            client.close();
        }
        first.close();
        second.close();
    }

    MetaserverClient client(String target) {
        MetaserverClientSettings settings = new MetaserverClientSettings(
                target,
                NODE,
                256,
                Duration.ofMillis(100),
                Duration.ofSeconds(2),
                128,
                Duration.ofMillis(20),
                Duration.ofMillis(200));
        client = new MetaserverClient(settings, resident::get).start();
        return client;
    }

    @Test
    void shouldFailOverAndReannounceWhenTheNextInstanceAnswersAnotherEpoch() {
        second.epoch.set(7); // a memory index of its own: it starts empty
        client(first.target() + "," + second.target());
        await().atMost(WAIT).until(() -> client.stats().reannouncements() == 1);
        assertThat(first.blocks).hasSize(300);
        assertThat(second.sessions).isEmpty();

        first.close(); // gone: connection refused
        client.onSealed("ns", MetaserverClientTest.hashes(300, 310));

        await().atMost(WAIT).until(() -> second.blocks.size() >= 300);
        assertThat(client.target()).isEqualTo(second.target());
        assertThat(client.stats().failovers()).isEqualTo(1);
        assertThat(second.sessions).containsEntry(NODE, client.nodeId().toString());
        assertThat(client.metaserverEpoch()).isEqualTo(7);
        await().atMost(WAIT).until(() -> client.stats().reannouncements() == 2);
        assertThat(second.blocks).contains(FakeMetaServer.key("ns", MetaserverClientTest.h(299)));
    }

    @Test
    void shouldFailOverWithoutReannouncingWhenTheNextInstanceServesTheSameIndex() {
        client(first.target() + "," + second.target()); // both answer epoch 1: one shared index
        await().atMost(WAIT).until(() -> client.stats().reannouncements() == 1);
        first.close();

        // the batch that meets the outage is sent again to the second instance, not dropped
        client.onSealed("ns", List.of(MetaserverClientTest.h(1000)));
        await().atMost(WAIT)
                .until(() -> second.blocks.contains(FakeMetaServer.key("ns", MetaserverClientTest.h(1000))));
        assertThat(client.stats().registrationFailures()).isZero();
        assertThat(second.sessions).containsEntry(NODE, client.nodeId().toString());
        assertThat(client.stats().failovers()).isEqualTo(1);
        assertThat(client.stats().reannouncements())
                .as("the index survived: nothing to announce again")
                .isEqualTo(1);
        assertThat(second.blocks).doesNotContain(FakeMetaServer.key("ns", MetaserverClientTest.h(0)));
    }

    @Test
    void shouldStayOnARefusingInstance() {
        first.failure = Status.FAILED_PRECONDITION.withDescription("stale node session");
        client(first.target() + "," + second.target());
        await().atMost(WAIT).until(() -> first.heartbeats.get() >= 3);
        // an answer, not an outage: the instance is alive and the other one would say the same
        assertThat(client.stats().failovers()).isZero();
        assertThat(second.heartbeats.get()).isZero();
        assertThat(client.target()).isEqualTo(first.target());
    }
}
