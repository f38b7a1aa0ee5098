package io.pegaflow.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.proto.QueryResponse;
import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.server.PegaServerApplication;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LayerReadyShm;
import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.PushClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The P/D push in the state every cache reaches after a few minutes of traffic: both servers' pools full of cached
 * blocks. Two whole servers in this JVM ({@code pega.pd.enabled}, UCX over TCP on loopback), a tenant on each that
 * keeps saving, and a prefill and a decode worker pushing between them. Push staging must make room the way a Save
 * does (evicting unreferenced cached blocks, no more than it needs), push byte for byte while Saves keep the pools
 * full, keep its staging while the cache churns around an open push, and fail cleanly with RESOURCE_EXHAUSTED when
 * every cached block is leased. Nothing stays allocated on either server afterwards.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class PdPushFullPoolTest {
    static final String HOST = "127.0.0.1";
    static final Duration RPC = Duration.ofSeconds(10);
    static final Duration WAIT = Duration.ofSeconds(30);
    static final long POOL_BYTES = 8L << 20;
    /** Evicted per reclaim step: one saved round, so what staging evicts is visible in whole rounds. */
    static final int EVICTION_BATCH = 4;

    static final int PUSH_LAYERS = 6;
    /** FlashAttention's KV-first tensor: 2 segments of 16 x 2 x 64 x 2 bytes, 8 KiB per block and layer. */
    static final KvLayout PUSH_LAYOUT = KvLayout.kvFirst(64, 16, 2, 64, 2);

    static final List<Integer> PUSHED = List.of(3, 4, 5, 9, 20, 21, 40);
    static final long STAGING_BYTES = (long) PUSHED.size() * PUSH_LAYERS * PUSH_LAYOUT.ownedBytesPerBlock();

    /** The tenant that fills the pool: 2 layers of 64 KiB blocks, saved 4 blocks (512 KiB of pool) a round. */
    static final KvLayout FILL_LAYOUT = KvLayout.kvFirst(16, 16, 8, 128, 2);

    static final int ROUND_BLOCKS = 4;
    static final long BLOCK_POOL_BYTES = 2 * FILL_LAYOUT.ownedBytesPerBlock();
    static final long ROUND_POOL_BYTES = ROUND_BLOCKS * BLOCK_POOL_BYTES;

    static Node prefillNode;
    static Node decodeNode;

    record Node(ConfigurableApplicationContext context, int port) {
        PegaEngine engine() {
            return context.getBean(PegaEngine.class);
        }
    }

    /** One tenant saving round after round on a node: each round new hashes, so the pool stays full. */
    static final class Tenant implements AutoCloseable {
        final Node node;
        final MockVllmWorker worker;
        final MockScheduler scheduler;
        int nextRound;

        Tenant(Node node, String instanceId) {
            this.node = node;
            this.worker = MockVllmWorker.builder(HOST, node.port())
                    .instanceId(instanceId)
                    .namespace("ns-" + instanceId)
                    .layer("fill_0", FILL_LAYOUT)
                    .layer("fill_1", FILL_LAYOUT)
                    .build();
            this.scheduler = MockScheduler.connect(HOST, node.port(), RPC);
            worker.register();
        }

        static List<ByteString> hashes(int round) {
            return BlockPattern.hashes(round, ROUND_BLOCKS);
        }

        /** Saves the next round; returns its number. */
        int saveRound() {
            int round = nextRound++;
            List<Integer> ids = IntStream.range(0, ROUND_BLOCKS).boxed().toList();
            worker.fillBlocks(ids, round);
            worker.save(ids, hashes(round));
            return round;
        }

        /** Saves until the pool has more than {@code rounds} rounds of churn behind it and is full. */
        void fill(int rounds) {
            for (int i = 0; i < rounds; i++) {
                saveRound();
            }
            node.engine().flushSeals();
        }

        /** The rounds whose blocks all hit, each probed with its own released lease. */
        List<Integer> residentRounds() {
            List<Integer> out = new ArrayList<>();
            for (int round = 0; round < nextRound; round++) {
                QueryResponse r = scheduler.query(worker.instanceId(), hashes(round), "probe-" + round);
                if (r.hasReady() && r.getReady().getNumHitBlocks() > 0) {
                    scheduler.release(r.getReady().getLease());
                    if (r.getReady().getNumHitBlocks() == ROUND_BLOCKS) {
                        out.add(round);
                    }
                }
            }
            return out;
        }

        @Override
        public void close() {
            worker.unregister();
            worker.close();
            scheduler.close();
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static Node start() throws IOException {
        int port = freePort();
        ConfigurableApplicationContext c = new SpringApplicationBuilder(PegaServerApplication.class)
                .run(
                        "--spring.grpc.server.port=" + port,
                        "--spring.grpc.server.host=" + HOST,
                        "--server.port=0",
                        "--server.address=" + HOST,
                        "--pega.pool.size=" + (POOL_BYTES >> 20) + "MB",
                        "--pega.eviction-batch=" + EVICTION_BATCH,
                        "--pega.device.backend=host",
                        "--pega.pd.enabled=true",
                        "--pega.pd.transports=tcp",
                        // handshakes sealed and checked between the two servers, as a cluster runs them
                        "--pega.cluster.token=pd-full-pool-test-cluster-credential",
                        "--logging.level.root=WARN");
        return new Node(c, port);
    }

    @BeforeAll
    static void startNodes() throws IOException {
        prefillNode = start();
        decodeNode = start();
    }

    @AfterAll
    static void stopNodes() {
        for (Node n : new Node[] {decodeNode, prefillNode}) {
            if (n != null) {
                n.context().close();
            }
        }
    }

    Tenant prefillTenant;
    Tenant decodeTenant;
    MockVllmWorker prefill;
    MockVllmWorker decode;
    PushClient prefillClient;
    PushClient decodeClient;

    @BeforeEach
    void fillBothPools() {
        prefillTenant = new Tenant(prefillNode, "tenant-p");
        decodeTenant = new Tenant(decodeNode, "tenant-d");
        int rounds = (int) (2 * POOL_BYTES / ROUND_POOL_BYTES);
        prefillTenant.fill(rounds);
        decodeTenant.fill(rounds);
        prefill = pushWorker(prefillNode, "prefill-0");
        decode = pushWorker(decodeNode, "decode-0");
        prefillClient = PushClient.connect(HOST, prefillNode.port(), RPC);
        decodeClient = PushClient.connect(HOST, decodeNode.port(), RPC);
        assertThat(prefillClient.registerLayers(prefill)).isEqualTo(PUSH_LAYERS);
        assertThat(decodeClient.registerLayers(decode)).isEqualTo(PUSH_LAYERS);
        for (Node n : List.of(prefillNode, decodeNode)) {
            assertThat(n.engine().pool().largestFreeBytes())
                    .as("the cache filled the pool of %s: no room for the staging without eviction", n)
                    .isLessThan(STAGING_BYTES);
        }
    }

    @AfterEach
    void nothingOutstanding() {
        closeAll(prefillClient, decodeClient, prefill, decode, prefillTenant, decodeTenant);
        for (Node n : List.of(prefillNode, decodeNode)) {
            PegaEngine e = n.engine();
            e.cleanupInstances(null);
            e.flushSeals();
            await().atMost(WAIT).untilAsserted(() -> {
                e.cleanupMemory();
                assertThat(e.activeLeases()).as("leases on %s", n).isZero();
                assertThat(e.pool().outstandingAllocations())
                        .as("allocations on %s", n)
                        .isZero();
            });
        }
    }

    static void closeAll(AutoCloseable... all) {
        for (AutoCloseable c : all) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    throw new IllegalStateException("closing " + c, e);
                }
            }
        }
    }

    static MockVllmWorker pushWorker(Node node, String instanceId) {
        return MockVllmWorker.builder(HOST, node.port())
                .instanceId(instanceId)
                .sharedLayers(
                        IntStream.range(0, PUSH_LAYERS)
                                .mapToObj(i -> "model.layers." + i + ".self_attn")
                                .toList(),
                        PUSH_LAYOUT)
                .build();
    }

    static List<Long> longs(List<Integer> ids) {
        return ids.stream().map(Integer::longValue).toList();
    }

    /** A push whose receive is prepared and whose StartPush was answered; layers are marked ready by the caller. */
    final class OpenPush implements AutoCloseable {
        final LoadStateShm loadState = LoadStateShm.create();
        final LoadStateShm pushState = LoadStateShm.create();
        final LayerReadyShm ready = LayerReadyShm.create(PUSH_LAYERS);
        final int salt;

        OpenPush(String tag, int salt) {
            this.salt = salt;
            decode.zeroBlocks(PUSHED);
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", tag + "-d", longs(PUSHED), List.of(loadState.name()), WAIT);
            prefillClient.startPush(
                    "prefill-0", 0, tag + "-p", prepared.getHandshake(), longs(PUSHED), ready, pushState, WAIT);
        }

        /** The forward pass: every layer written and marked ready. */
        void prefillDone() {
            prefill.fillBlocks(PUSHED, BlockPattern.perByte(salt));
            ready.markReady(PUSH_LAYERS);
        }

        /** Both sides signalled success and the decode worker holds the prefill worker's bytes. */
        void assertDelivered() {
            assertThat(loadState.awaitTerminal(WAIT)).as("load_state").isEqualTo(LoadStateShm.SUCCESS);
            assertThat(pushState.awaitTerminal(WAIT)).as("push_state").isEqualTo(LoadStateShm.SUCCESS);
            decode.verifyBlocks(PUSHED, BlockPattern.perByte(salt));
        }

        @Override
        public void close() {
            closeAll(ready, pushState, loadState);
        }
    }

    void pushOnce(String tag, int salt) {
        try (OpenPush push = new OpenPush(tag, salt)) {
            push.prefillDone();
            push.assertDelivered();
        }
    }

    @Test
    void shouldPushByteExactWhenBothPoolsAreFullOfCachedBlocksEvictingOnlyWhatStagingNeeds() {
        List<Integer> prefillResident = prefillTenant.residentRounds();
        List<Integer> decodeResident = decodeTenant.residentRounds();
        long prefillEvictions = prefillNode.engine().metrics().count(EngineCounter.CACHE_EVICTIONS);
        long decodeEvictions = decodeNode.engine().metrics().count(EngineCounter.CACHE_EVICTIONS);

        pushOnce("full", 17);

        // staging took what it needed from the LRU end, at most two saved rounds (one whole-round allocation per
        // layer of the tenant may lie between the freed ones), and nothing else
        for (Object[] side : new Object[][] {
            {prefillNode, prefillTenant, prefillResident, prefillEvictions},
            {decodeNode, decodeTenant, decodeResident, decodeEvictions}
        }) {
            Node n = (Node) side[0];
            Tenant t = (Tenant) side[1];
            @SuppressWarnings("unchecked")
            List<Integer> before = (List<Integer>) side[2];
            long evicted = n.engine().metrics().count(EngineCounter.CACHE_EVICTIONS) - (long) side[3];
            long maxEvictedBlocks =
                    (STAGING_BYTES + ROUND_POOL_BYTES - 1) / ROUND_POOL_BYTES * ROUND_BLOCKS + ROUND_BLOCKS;
            assertThat(evicted).as("blocks evicted for the staging on %s", n).isPositive();
            assertThat(evicted).as("no more than staging needs on %s", n).isLessThanOrEqualTo(maxEvictedBlocks);
            List<Integer> after = t.residentRounds();
            assertThat(before).containsAll(after);
            assertThat(after).as("the most recent rounds stay cached on %s", n).contains(before.get(before.size() - 1));
            assertThat((long) (before.size() - after.size()) * ROUND_BLOCKS).isLessThanOrEqualTo(maxEvictedBlocks);
        }
    }

    @Test
    void shouldKeepPushingWhileSavesKeepBothPoolsFull() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger saved = new AtomicInteger();
        CompletableFuture<Void> saver = CompletableFuture.runAsync(() -> {
            // bounded: at most 200 rounds per side, ending early once the pushes are done
            for (int i = 0; i < 200 && !stop.get(); i++) {
                prefillTenant.saveRound();
                decodeTenant.saveRound();
                saved.incrementAndGet();
            }
        });
        try {
            for (int i = 0; i < 5; i++) {
                pushOnce("busy-" + i, 100 + i);
            }
        } finally {
            stop.set(true);
            saver.get(WAIT.toSeconds(), TimeUnit.SECONDS); // a failed Save fails the test here
        }
        assertThat(saved.get()).as("saves ran beside the pushes").isPositive();
        assertThat(prefillTenant.residentRounds()).contains(prefillTenant.nextRound - 1);
        assertThat(decodeTenant.residentRounds()).contains(decodeTenant.nextRound - 1);
    }

    @Test
    void shouldKeepAnOpenPushsStagingWhileTheCacheChurnsAroundIt() {
        try (OpenPush push = new OpenPush("churn", 29)) {
            // both pools turn over twice while the receive and the push hold their staging
            int rounds = (int) (2 * POOL_BYTES / ROUND_POOL_BYTES);
            prefillTenant.fill(rounds);
            decodeTenant.fill(rounds);
            push.prefillDone();
            push.assertDelivered();
        }
    }

    @Test
    void shouldFailCleanlyWhenEveryCachedBlockIsLeased() {
        List<ByteString> leases = new ArrayList<>();
        for (int round : decodeTenant.residentRounds()) {
            QueryResponse r = decodeTenant.scheduler.query("tenant-d", Tenant.hashes(round), "hold-" + round);
            leases.add(r.getReady().getLease());
        }
        assertThat(leases).isNotEmpty();
        PegaEngine engine = decodeNode.engine();
        int outstanding = engine.pool().outstandingAllocations();
        long used = engine.pool().usedBytes();
        try (LoadStateShm loadState = LoadStateShm.create()) {
            assertThatThrownBy(() -> decodeClient.prepareReceive(
                            "decode-0", "leased-d", longs(PUSHED), List.of(loadState.name()), WAIT))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                        assertThat(e.getStatus().getDescription())
                                .startsWith("receive staging of instance decode-0 rank 0: the pool has no room for "
                                        + STAGING_BYTES + " bytes");
                    });
        }
        assertThat(engine.pool().outstandingAllocations())
                .as("nothing left allocated")
                .isEqualTo(outstanding);
        assertThat(engine.pool().usedBytes()).isEqualTo(used);
        assertThat(decodeClient.serverAlive(RPC)).isTrue();

        leases.forEach(lease -> decodeTenant.scheduler.release(lease));
        pushOnce("released", 41);
    }
}
