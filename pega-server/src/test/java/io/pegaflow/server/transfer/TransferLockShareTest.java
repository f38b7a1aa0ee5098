package io.pegaflow.server.transfer;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.QueryBlocksForTransferRequest;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;

/**
 * Transfer locks cannot pin the pool (decision 0030): a tenant fills a 32 MiB pool with its own blocks and locks them
 * with {@code QueryBlocksForTransfer}. One requester id holds at most a quarter of the pool, all requesters together at
 * most half; a lock past either bound is RESOURCE_EXHAUSTED naming its key and locks nothing. With the locks at their
 * bounds another tenant's Save still gets memory, and the operator's memory cleanup breaks every lock and gives the
 * whole pool back. Before the bounds, one requester locked the full pool for the lock timeout (renewably) and the
 * cleanup reclaimed nothing.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=32MB",
            "pega.device.backend=host",
            "pega.rdma.enabled=true",
            "pega.rdma.nics=lo",
            "pega.rdma.transports=tcp",
            "pega.rdma.transfer-lock-timeout=120s",
            "pega.rdma.transfer-timeout=60s"
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TransferLockShareTest {
    static final String HOST = "127.0.0.1";
    static final String NAMESPACE = "ns-lock-share";
    static final Duration WAIT = Duration.ofSeconds(20);
    static final long MIB = 1L << 20;
    static final int BLOCKS = 24;

    @Autowired
    GrpcPort port;

    @Autowired
    PegaEngine engine;

    @LocalServerPort
    int httpPort;

    @Test
    void shouldBoundLockedBytesPerRequesterAndInAllAndLetCleanupBreakThem() throws Exception {
        List<ByteString> hashes = BlockPattern.hashes(3001, BLOCKS);
        List<ByteString> otherHashes = BlockPattern.hashes(3002, 8);
        try (MockScheduler s = MockScheduler.connect(HOST, port.port());
                MockVllmWorker owner = worker("lock-share-owner", BLOCKS);
                MockVllmWorker other = worker("lock-share-other", 8)) {
            owner.register();
            other.register();
            owner.fillBlocks(blockIds(BLOCKS), BlockPattern.perByte(3001));
            // 24 MiB of the 32 MiB pool, in Saves under the per-request share
            owner.save(blockIds(12), hashes.subList(0, 12));
            owner.save(blockIds(12, BLOCKS), hashes.subList(12, BLOCKS));
            engine.flushSeals();
            EngineGrpc.EngineBlockingStub stub = s.stub().withDeadlineAfter(30, TimeUnit.SECONDS);

            // the whole tenant's blocks under one requester: refused whole, nothing locked
            assertThatThrownBy(() -> stub.queryBlocksForTransfer(query("127.0.0.1:1", hashes)))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                        assertThat(e.getStatus().getDescription()).contains("pega.rdma.transfer-lock-requester-share");
                    });
            assertThat(engine.transferLockStats().sessions()).isZero();
            assertThat(engine.transferLockStats().lockedBytes()).isZero();

            // a quarter of the pool per requester, across its sessions
            assertThat(stub.queryBlocksForTransfer(query("127.0.0.1:1", hashes.subList(0, 5)))
                            .getBlocksCount())
                    .isEqualTo(5);
            assertThat(stub.queryBlocksForTransfer(query("127.0.0.1:1", hashes.subList(5, 8)))
                            .getBlocksCount())
                    .isEqualTo(3);
            assertThatThrownBy(() -> stub.queryBlocksForTransfer(query("127.0.0.1:1", hashes.subList(8, 9))))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));

            // half of the pool in all, whatever requester ids a caller invents
            assertThat(stub.queryBlocksForTransfer(query("127.0.0.1:2", hashes.subList(8, 16)))
                            .getBlocksCount())
                    .isEqualTo(8);
            assertThatThrownBy(() -> stub.queryBlocksForTransfer(query("127.0.0.1:3", hashes.subList(16, 17))))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                        assertThat(e.getStatus().getDescription()).contains("pega.rdma.transfer-lock-pool-share");
                    });
            assertThat(engine.transferLockStats().lockedBytes()).isEqualTo(16 * MIB);
            assertThat(engine.transferLockStats().sessions()).isEqualTo(3);
            assertThat(engine.transferLockStats().refused()).isEqualTo(3);

            // the pool is full and half of it locked: another tenant's 8 MiB Save still evicts and succeeds
            other.fillBlocks(blockIds(8), BlockPattern.perByte(3002));
            assertThat(other.save(blockIds(8), otherHashes).getStatus().getOk()).isTrue();
            s.awaitSealed(other.instanceId(), otherHashes, WAIT);

            // the operator's cleanup breaks every lock and reclaims everything
            HttpResponse<String> cleanup = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(
                                            URI.create("http://" + HOST + ":" + httpPort + "/cache/memory/cleanup"))
                                    .timeout(WAIT)
                                    .header("X-Pega-Request", "1")
                                    .POST(HttpRequest.BodyPublishers.noBody())
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(cleanup.statusCode()).isEqualTo(200);
            assertThat(cleanup.body())
                    .contains("\"broken_transfer_locks\":3")
                    .contains("\"still_referenced_blocks\":0");
            assertThat(engine.transferLockStats().sessions()).isZero();
            assertThat(engine.transferLockStats().lockedBytes()).isZero();
            assertThat(engine.transferLockStats().broken()).isEqualTo(3);
            owner.unregister();
            other.unregister();
        }
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(engine.pool().outstandingAllocations())
                        .as("pool allocations")
                        .isZero());
    }

    MockVllmWorker worker(String id, int blocks) {
        return MockVllmWorker.builder(HOST, port.port())
                .instanceId(id)
                .namespace(NAMESPACE)
                .layer("layer_0", KvLayout.contiguous(blocks, MIB))
                .build();
    }

    static QueryBlocksForTransferRequest query(String requester, List<ByteString> hashes) {
        return QueryBlocksForTransferRequest.newBuilder()
                .setNamespace(NAMESPACE)
                .addAllBlockHashes(hashes)
                .setRequesterId(requester)
                .build();
    }
}
