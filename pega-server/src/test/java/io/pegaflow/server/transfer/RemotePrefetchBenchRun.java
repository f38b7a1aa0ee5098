package io.pegaflow.server.transfer;

import static io.pegaflow.server.transfer.RemoteFetchNodes.HOST;
import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.kernel.plan.MergeRule;
import io.pegaflow.node.remote.RemoteFetchTier;
import io.pegaflow.proto.QueryBlocksForTransferRequest;
import io.pegaflow.proto.QueryBlocksForTransferResponse;
import io.pegaflow.proto.QueryResponse;
import io.pegaflow.proto.ReleaseTransferLockRequest;
import io.pegaflow.proto.TransferBlockInfo;
import io.pegaflow.proto.TransferSlotInfo;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.TransferBatch;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The end-to-end figure of docs/transfer.md: a remote prefix of 1024 blocks of 64 KiB from node A to node B (two
 * servers in this JVM, UCX over TCP on 127.0.0.1), the time from B's first QueryPrefetch to Ready, against the raw
 * engine time of the same gets (same ranges, same merge rule, on B's connection to A). On demand only:
 * {@code ./mvnw -o -pl pega-server -am test -Dtest=RemotePrefetchBenchRun -Dsurefire.failIfNoSpecifiedTests=false
 * -Dtransfer.bench=true [-Dtransfer.bench.blocks=1024] [-Dtransfer.bench.rounds=3]}.
 */
class RemotePrefetchBenchRun {
    static final String NS = "ns-bench";
    static final long BLOCK_BYTES = 64 * 1024;

    @Test
    @EnabledIfSystemProperty(named = "transfer.bench", matches = "true")
    void run() throws Exception {
        int blocks = Integer.getInteger("transfer.bench.blocks", 1024);
        int rounds = Integer.getInteger("transfer.bench.rounds", 3);
        long kv = blocks * BLOCK_BYTES;
        long pool = 2 * kv + (64L << 20);
        int portA = RemoteFetchNodes.freePort();
        int portB = RemoteFetchNodes.freePort();
        try (OwnerIndexMetaServer metaserver = new OwnerIndexMetaServer();
                ConfigurableApplicationContext a = RemoteFetchNodes.start(metaserver, portA, pool, List.of());
                ConfigurableApplicationContext b = RemoteFetchNodes.start(metaserver, portB, pool, List.of());
                MockVllmWorker owner = worker(portA, "bench-a", blocks);
                MockVllmWorker reader = worker(portB, "bench-b", blocks);
                MockScheduler schedA = MockScheduler.connect(HOST, portA);
                MockScheduler schedB = MockScheduler.connect(HOST, portB)) {
            owner.register();
            reader.register();
            io.pegaflow.core.engine.PegaEngine engineA = a.getBean(io.pegaflow.core.engine.PegaEngine.class);
            io.pegaflow.core.engine.PegaEngine engineB = b.getBean(io.pegaflow.core.engine.PegaEngine.class);
            TransferEngine transfersB = b.getBean(TransferEngine.class);
            PeerId peerA = new PeerId(HOST + ":" + portA);
            for (int r = 0; r < rounds; r++) {
                BlockPattern pattern = BlockPattern.perByte(500 + r);
                List<ByteString> hashes = BlockPattern.hashes(500 + r, blocks);
                owner.fillBlocks(blockIds(blocks), pattern);
                owner.save(blockIds(blocks), hashes);
                engineA.flushSeals();
                await().atMost(Duration.ofSeconds(60))
                        .until(() ->
                                metaserver.ownersOf(NS, hashes.get(blocks - 1)).contains(HOST + ":" + portA));

                long t0 = System.nanoTime();
                QueryResponse q = schedB.query(reader.instanceId(), hashes, "bench-" + r);
                while (!q.hasReady()) {
                    Thread.sleep(1);
                    q = schedB.query(reader.instanceId(), hashes, "bench-" + r);
                }
                long e2e = System.nanoTime() - t0;
                assertThat(q.getReady().getNumHitBlocks()).isEqualTo(blocks);
                assertThat(reader.load(q.getReady().getLease(), blockIds(blocks))
                                .succeeded())
                        .isTrue();
                reader.verifyBlocks(blockIds(blocks), pattern);

                long raw = rawGet(schedA, transfersB, engineB, peerA, hashes);
                double mib = kv / (1024.0 * 1024.0);
                System.out.printf(
                        "remote prefix of %d x 64 KiB (%.0f MiB): QueryPrefetch->Ready %.1f ms (%.0f MiB/s), raw engine"
                                + " get %.1f ms (%.0f MiB/s), ratio %.2f%n",
                        blocks, mib, e2e / 1e6, mib / (e2e / 1e9), raw / 1e6, mib / (raw / 1e9), (double) e2e / raw);
                engineB.cleanupMemory();
                engineA.cleanupMemory();
            }
            reader.unregister();
            owner.unregister();
        }
    }

    private static MockVllmWorker worker(int port, String id, int blocks) {
        return MockVllmWorker.builder(HOST, port)
                .instanceId(id)
                .namespace(NS)
                .layer("layer_0", KvLayout.contiguous(blocks, BLOCK_BYTES))
                .build();
    }

    /** The same gets as the tier issues (ranges from a lock on A, merged up to 4 MiB), timed submit to result. */
    private static long rawGet(
            MockScheduler schedA,
            TransferEngine transfers,
            io.pegaflow.core.engine.PegaEngine engineB,
            PeerId peerA,
            List<ByteString> hashes)
            throws Exception {
        QueryBlocksForTransferResponse grant = schedA.stub()
                .withDeadlineAfter(30, TimeUnit.SECONDS)
                .queryBlocksForTransfer(QueryBlocksForTransferRequest.newBuilder()
                        .setNamespace(NS)
                        .addAllBlockHashes(hashes)
                        .setRequesterId("bench")
                        .build());
        long total = 0;
        for (TransferBlockInfo blk : grant.getBlocksList()) {
            for (TransferSlotInfo s : blk.getSlotsList()) {
                total += s.getKSize();
            }
        }
        List<PinnedAllocation> chunks = new java.util.ArrayList<>();
        try {
            TransferBatch batch =
                    TransferBatch.get(grant.getBlocksCount(), MergeRule.upTo(RemoteFetchTier.MAX_GET_BYTES));
            long at = 0;
            long left = 0;
            for (TransferBlockInfo blk : grant.getBlocksList()) {
                for (TransferSlotInfo s : blk.getSlotsList()) {
                    if (left < s.getKSize()) {
                        long size = Math.max(s.getKSize(), Math.min(RemoteFetchTier.CHUNK_BYTES, total));
                        PinnedAllocation chunk = engineB.staging().allocate("bench memory", size);
                        assertThat(chunk).as("bench memory").isNotNull();
                        chunks.add(chunk);
                        at = chunk.address();
                        left = size;
                    }
                    batch.add(at, s.getKPtr(), s.getKSize());
                    at += s.getKSize();
                    left -= s.getKSize();
                    total -= s.getKSize();
                }
            }
            long t0 = System.nanoTime();
            TransferResult result =
                    transfers.submit(peerA, batch, TimeUnit.SECONDS.toNanos(60)).get(90, TimeUnit.SECONDS);
            long took = System.nanoTime() - t0;
            assertThat(result.isComplete()).as(result.toString()).isTrue();
            return took;
        } finally {
            chunks.forEach(PinnedAllocation::release);
            schedA.stub()
                    .withDeadlineAfter(30, TimeUnit.SECONDS)
                    .releaseTransferLock(ReleaseTransferLockRequest.newBuilder()
                            .setTransferSessionId(grant.getTransferSessionId())
                            .build());
        }
    }
}
