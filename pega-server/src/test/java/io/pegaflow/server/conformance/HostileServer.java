package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.server.PegaServerApplication;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ReferenceHarness;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The server the hostile-input properties run against: a whole pega-server in this JVM on ephemeral loopback ports
 * (host backend, 16 MB pool), a client, and a victim tenant with {@link #VICTIM_BLOCKS} saved blocks whose bytes no
 * case may touch.
 */
final class HostileServer implements AutoCloseable {
    static final int VICTIM_BLOCKS = 4;

    private final ConfigurableApplicationContext context;
    final PegaEngine engine;
    final int port;
    final MockScheduler client;
    final MockVllmWorker victim;
    private final BlockPattern pattern;

    private HostileServer(ConfigurableApplicationContext context, BlockPattern pattern, List<ByteString> victimHashes) {
        this.context = context;
        this.pattern = pattern;
        this.engine = context.getBean(PegaEngine.class);
        this.port = context.getBean(GrpcPort.class).port();
        this.client = MockScheduler.connect("127.0.0.1", port);
        this.victim =
                ReferenceHarness.worker("127.0.0.1", port).instanceId("victim").build();
        victim.register();
        victim.fillBlocks(blockIds(VICTIM_BLOCKS), pattern);
        victim.save(blockIds(VICTIM_BLOCKS), victimHashes);
        client.awaitHits("victim", victimHashes, VICTIM_BLOCKS, Duration.ofSeconds(10));
    }

    /**
     * Starts the server and saves the victim's blocks, filled with {@code pattern}, under {@code victimHashes}.
     *
     * @param extraArgs further {@code --name=value} arguments (features to turn on, log levels)
     */
    static HostileServer start(BlockPattern pattern, List<ByteString> victimHashes, String... extraArgs) {
        List<String> args = new ArrayList<>(List.of(
                "--spring.grpc.server.port=0",
                "--server.port=0",
                "--server.address=127.0.0.1",
                "--pega.pool.size=16MB",
                "--pega.device.backend=host",
                "--logging.level.root=WARN"));
        args.addAll(List.of(extraArgs));
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(PegaServerApplication.class).run(args.toArray(String[]::new));
        try {
            return new HostileServer(context, pattern, victimHashes);
        } catch (RuntimeException | Error e) {
            context.close();
            throw e;
        }
    }

    /** After every case: the server answers, the victim's memory is untouched and its instance still registered. */
    void assertVictimUntouched() {
        assertThat(client.health().getStatus().getOk()).isTrue();
        victim.verifyBlocks(blockIds(VICTIM_BLOCKS), pattern);
        assertThat(engine.instanceIds()).contains("victim");
    }

    /**
     * Closes the victim and the client, ends every instance, drops the cache, and checks that nothing is left: no
     * lease, no pool allocation.
     */
    void drain() {
        victim.close();
        client.close();
        engine.cleanupInstances(null);
        engine.flushSeals();
        engine.cleanupMemory();
        assertThat(engine.activeLeases()).as("leases").isZero();
        assertThat(engine.pool().outstandingAllocations())
                .as("pool allocations")
                .isZero();
    }

    @Override
    public void close() {
        context.close();
    }
}
