package io.pegaflow.server.internode;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ReferenceHarness;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The whole server with a metaserver configured: blocks saved through the Engine service are announced when sealed,
 * re-announced from the engine's resident set after the metaserver restarts (new epoch, empty index), and removed
 * when evicted.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host",
            "pega.metaserver.advertise-addr=127.0.0.1:50055",
            "pega.metaserver.allow-loopback=true",
            "pega.metaserver.heartbeat-interval=200ms"
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaserverAnnouncementTest {

    static final String HOST = "127.0.0.1";
    static final String NAMESPACE = "ns-metaserver";
    static final Duration WAIT = Duration.ofSeconds(15);
    static final FakeMetaServer METASERVER = start();

    @Autowired
    GrpcPort grpcPort;

    @Autowired
    PegaEngine engine;

    @Autowired
    MetaserverClient client;

    static FakeMetaServer start() {
        try {
            return new FakeMetaServer();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @DynamicPropertySource
    static void metaserver(DynamicPropertyRegistry registry) {
        registry.add("pega.metaserver.addr", () -> "http://" + METASERVER.target());
    }

    @AfterAll
    static void stopMetaserver() throws Exception {
        METASERVER.close();
    }

    static Set<String> keys(List<ByteString> hashes) {
        return hashes.stream().map(h -> FakeMetaServer.key(NAMESPACE, h)).collect(Collectors.toSet());
    }

    @Test
    void shouldAnnounceSealedBlocksAndReannounceThemAfterAMetaserverRestart() {
        List<ByteString> hashes = BlockPattern.hashes32(91, 3);
        try (MockScheduler scheduler = MockScheduler.connect(HOST, grpcPort.port());
                MockVllmWorker worker = ReferenceHarness.worker(HOST, grpcPort.port())
                        .instanceId("metaserver-announce")
                        .namespace(NAMESPACE)
                        .build()) {
            worker.register();
            worker.fillBlocks(blockIds(3), BlockPattern.perByte(91));
            worker.save(blockIds(3), hashes);
            scheduler.awaitSealed("metaserver-announce", hashes, WAIT);

            await().atMost(WAIT).until(() -> METASERVER.blocks.containsAll(keys(hashes)));
            assertThat(METASERVER.sessions)
                    .containsEntry("127.0.0.1:50055", client.nodeId().toString());

            METASERVER.restart();
            await().atMost(WAIT).until(() -> METASERVER.blocks.containsAll(keys(hashes)));
            // the client counts a re-announcement once its inserts returned, a moment after the metaserver holds them
            await().atMost(WAIT)
                    .untilAsserted(
                            () -> assertThat(client.stats().reannouncedBlocks()).isGreaterThanOrEqualTo(3));

            worker.unregister();
        }
        engine.cleanupInstances(null);
        engine.flushSeals();
        engine.cleanupMemory(); // evicts every resident block: the metaserver is told
        await().atMost(WAIT).until(() -> METASERVER.blocks.stream().noneMatch(keys(hashes)::contains));
        assertThat(client.stats().registrationQueueFull()).isZero();
    }
}
