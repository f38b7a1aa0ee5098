package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockVllmWorker;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The server's 16 MiB pool under a working set many times its size, over real gRPC: saves keep succeeding through
 * eviction, leased blocks survive it byte-exact, and a pool whose every block is leased fails Save with the reference's
 * INTERNAL text. A smaller pool with exact eviction order is covered in pega-core.
 */
@Timeout(120)
class MemoryPressureTest extends ConformanceSupport {
    private static final String ID = "pressure";
    private static final int BLOCK_BYTES = 256 * 1024;
    private static final int DEVICE_BLOCKS = 16; // 4 MiB per device, a quarter of the pool
    private static final int BATCH = 8;

    private MockVllmWorker worker() {
        return bareWorker(ID)
                .layer("layer_0", KvLayout.contiguous(DEVICE_BLOCKS, BLOCK_BYTES))
                .build();
    }

    /** Saves device blocks 0..7, filled with the pattern of salt {@code round}, under hashes of {@code round}. */
    private static List<ByteString> saveRound(MockVllmWorker w, int round) {
        List<ByteString> hashes = BlockPattern.hashes32(round, BATCH);
        w.fillBlocks(blockIds(BATCH), BlockPattern.perByte(round));
        w.save(blockIds(BATCH), hashes);
        return hashes;
    }

    @Test
    void shouldKeepSavingThroughEvictionAndKeepLeasedBlocks() {
        try (MockVllmWorker w = worker()) {
            w.register();
            List<ByteString> kept = saveRound(w, 0);
            QueryReady lease = awaitReady(ID, kept, BATCH, "kept");

            // 40 rounds × 2 MiB = 80 MiB through a 16 MiB pool.
            List<ByteString> last = kept;
            for (int round = 1; round <= 40; round++) {
                last = saveRound(w, round);
            }
            engine.flushSeals();

            assertThat(engine.metrics().count(EngineCounter.CACHE_EVICTIONS)).isPositive();
            assertThat(engine.pool().usedBytes())
                    .isLessThanOrEqualTo(engine.pool().capacityBytes());
            assertThat(scheduler
                            .queryUntilReady(ID, BlockPattern.hashes32(1, BATCH), "evicted", WAIT)
                            .getNumHitBlocks())
                    .as("an old unleased round was evicted")
                    .isZero();
            QueryReady newest = awaitReady(ID, last, BATCH, "newest");
            w.zeroBlocks(blockIds(DEVICE_BLOCKS));
            assertThat(w.load(lease.getLease(), blockIds(BATCH)).succeeded()).isTrue();
            w.verifyBlocks(blockIds(BATCH), BlockPattern.perByte(0));
            assertThat(w.load(newest.getLease(), blockIds(BATCH, DEVICE_BLOCKS)).succeeded())
                    .isTrue();
            for (int i = 0; i < BATCH; i++) {
                assertThat(w.layers().get(0).memory().readBytes((long) (BATCH + i) * BLOCK_BYTES, BLOCK_BYTES))
                        .as("block %d of the newest round", i)
                        .isEqualTo(
                                BlockPattern.perByte(40).forSlot("layer_0", 0).bytes(i, 0, BLOCK_BYTES));
            }
        }
    }

    @Test
    void shouldFailSaveWithPoolExhaustedWhenEveryBlockIsLeased() {
        try (MockVllmWorker w = worker()) {
            w.register();
            List<ByteString> leases = new ArrayList<>();
            StatusRuntimeException exhausted = null;
            for (int round = 0; round < 20 && exhausted == null; round++) {
                try {
                    List<ByteString> hashes = saveRound(w, 200 + round);
                    leases.add(awaitReady(ID, hashes, BATCH, "hold-" + round).getLease());
                } catch (StatusRuntimeException e) {
                    exhausted = e;
                }
            }

            assertThat(exhausted)
                    .as("a 16 MiB pool holds at most 8 leased rounds of 2 MiB")
                    .isNotNull();
            assertThat(leases).hasSizeBetween(6, 8);
            assertThat(exhausted.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
            assertThat(exhausted.getStatus().getDescription())
                    .isEqualTo("storage error: pinned pool exhausted while allocating contiguous block buffer");

            leases.forEach(scheduler::release);
            List<ByteString> after = saveRound(w, 300);
            assertThat(awaitReady(ID, after, BATCH, "after").getNumHitBlocks()).isEqualTo(BATCH);
        }
    }

    @Test
    void shouldReleaseEveryPartialAllocationWhenAMultiLayerSplitSaveRunsOutOfPool() {
        // Two split layers: each save allocates K and V buffers per layer (4 allocations of 256 KiB for 16 blocks).
        KvLayout split = KvLayout.kvFirst(16, 16, 8, 64, 2);
        try (MockVllmWorker w =
                bareWorker(ID).layer("layer_0", split).layer("layer_1", split).build()) {
            w.register();
            List<ByteString> leases = new ArrayList<>();
            StatusRuntimeException exhausted = null;
            for (int round = 0; round < 40 && exhausted == null; round++) {
                List<ByteString> hashes = BlockPattern.hashes32(400 + round, 16);
                w.fillBlocks(blockIds(16), BlockPattern.perByte(round));
                try {
                    w.save(blockIds(16), hashes);
                    leases.add(awaitReady(ID, hashes, 16, "split-" + round).getLease());
                } catch (StatusRuntimeException e) {
                    exhausted = e;
                }
            }

            assertThat(exhausted).isNotNull();
            assertThat(exhausted.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
            assertThat(exhausted.getStatus().getDescription())
                    .isIn(
                            "storage error: pinned pool exhausted while allocating K segment buffer",
                            "storage error: pinned pool exhausted while allocating V segment buffer");
            long heldBytes = engine.pool().usedBytes();
            leases.forEach(scheduler::release);
            engine.cleanupMemory();
            assertThat(engine.pool().usedBytes())
                    .as("the failed save left nothing allocated (was %d bytes while leased)", heldBytes)
                    .isZero();
            assertThat(engine.pool().outstandingAllocations()).isZero();
        }
    }
}
