package io.pegaflow.metaserver.grpc;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static io.pegaflow.metaserver.grpc.Requests.query;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.pegaflow.metaserver.config.MetaserverProperties;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.proto.MetaServerGrpc;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many concurrent clients in steady state are served by the metaserver's fixed sets of call workers: every call
 * answers, and no thread of gRPC's unbounded default executor is started.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaServerCallWorkersTest {

    private static final int CLIENTS = 64;
    private static final int ROUNDS = 40;

    @TempDir
    Path dir;

    @Test
    void shouldServeManyConcurrentClientsOnAFixedSetOfWorkers() throws Exception {
        try (MetaserverTestApp app = MetaserverTestApp.start(
                dir,
                new AdjustableClock(),
                "--logging.level.root=WARN",
                // the bound on threads is under test, not shedding: a slow machine must not turn waits into refusals
                "--pega.metaserver.calls.max-queue-wait-ms=60000")) {
            // The client's own callbacks run on this pool, so a new grpc-default-executor thread would be the server's.
            ExecutorService clientPool = Executors.newFixedThreadPool(4);
            ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", app.grpcPort())
                    .usePlaintext()
                    .executor(clientPool)
                    .offloadExecutor(clientPool)
                    .build();
            // Other test classes in this JVM may have left idle default-executor threads of their own clients.
            Set<String> before = ConcurrentHashMap.newKeySet();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                before.add(t.getName());
            }
            Set<String> serverThreads = ConcurrentHashMap.newKeySet();
            AtomicInteger answered = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(CLIENTS);
            List<Thread> clients = new ArrayList<>();
            try {
                for (int c = 0; c < CLIENTS; c++) {
                    int client = c;
                    Thread thread = new Thread(
                            () -> {
                                MetaServerGrpc.MetaServerBlockingStub stub =
                                        MetaServerGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
                                String node = "10.77.0." + (client + 1) + ":50055";
                                UUID id = UUID.randomUUID();
                                for (int r = 0; r < ROUNDS; r++) {
                                    stub.heartbeatNode(heartbeat(node, id));
                                    stub.insertBlockHashes(insert("ns", node, id, h(client * 1_000L + r), h(r)));
                                    if (stub.queryPrefixBlocks(query("ns", h(r)))
                                                    .getNodesCount()
                                            > 0) {
                                        answered.incrementAndGet();
                                    }
                                    for (Thread t : Thread.getAllStackTraces().keySet()) {
                                        serverThreads.add(t.getName());
                                    }
                                }
                                done.countDown();
                            },
                            "call-workers-client-" + c);
                    thread.start();
                    clients.add(thread);
                }
                assertThat(done.await(90, TimeUnit.SECONDS)).isTrue();
            } finally {
                for (Thread t : clients) {
                    t.join(10_000);
                }
                channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
                clientPool.shutdownNow();
            }

            assertThat(answered.get()).isEqualTo(CLIENTS * ROUNDS);
            int workers = app.bean(MetaserverProperties.class)
                    .calls()
                    .workersFor(Runtime.getRuntime().availableProcessors());
            assertThat(serverThreads)
                    .filteredOn(n -> n.startsWith("grpc-default-executor") && !before.contains(n))
                    .isEmpty();
            assertThat(serverThreads)
                    .filteredOn(n -> n.startsWith("metaserver-grpc-"))
                    .hasSizeLessThanOrEqualTo(workers + 4) // the database workers: the default pool of 4
                    .isNotEmpty();
        }
    }
}
