package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.LoadResult;
import io.pegaflow.testkit.MockVllmWorker;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A worker owns the shared-memory object it registered and may shrink it ({@code ftruncate}) under the server's
 * mapping at any time. Touching a page past the new end raises SIGBUS; it must fail that worker's request, never the
 * process, and every other tenant keeps its bytes (docs/decisions/0006-hostile-clients.md).
 *
 * <p>Client and server share this JVM, so after the truncation the test never touches the shrunk worker's memory
 * itself: only the server does.
 */
@Timeout(120)
class HostileWorkerMemoryTest extends ConformanceSupport {
    private static final BlockPattern PATTERN = BlockPattern.perByte(77);
    private static final String COPY_FAILED =
            "storage error: batch copy failed: the worker's shared-memory object no longer covers its registered range";

    private static void shrink(MockVllmWorker w, long bytes) throws IOException {
        try (RandomAccessFile object = new RandomAccessFile("/dev/shm/" + shmOf(w), "rw")) {
            object.setLength(bytes);
        }
    }

    private QueryReady saveAndQuery(MockVllmWorker w, List<ByteString> hashes, String reqId) {
        w.fillBlocks(blockIds(4), PATTERN);
        w.save(blockIds(4), hashes);
        return awaitReady(w.instanceId(), hashes, 4, reqId);
    }

    @Test
    void shouldFailSaveAndLoadOfAShrunkObjectAndKeepServing() throws IOException {
        try (MockVllmWorker hostile = refWorker("hostile-shm").build();
                MockVllmWorker bystander =
                        refWorker("bystander-shm").namespace("bystander").build()) {
            hostile.register();
            bystander.register();
            QueryReady hostileLease = saveAndQuery(hostile, BlockPattern.hashes(500, 4), "hostile");
            QueryReady bystanderLease = saveAndQuery(bystander, BlockPattern.hashes(600, 4), "bystander");

            shrink(hostile, 0);

            assertStatus(
                    () -> hostile.save(blockIds(4), BlockPattern.hashes(501, 4)), Status.Code.INTERNAL, COPY_FAILED);
            LoadResult load = hostile.load(hostileLease.getLease(), blockIds(4));
            assertThat(load.succeeded())
                    .as("load into a shrunk object: %s", load)
                    .isFalse();
            assertThat(load.shmFailed()).isTrue();

            bystander.zeroBlocks(blockIds(4));
            assertThat(bystander.load(bystanderLease.getLease(), blockIds(4)).succeeded())
                    .isTrue();
            bystander.verifyBlocks(blockIds(4), PATTERN);
        }
    }

    @Test
    void shouldFailOnlyTheRangesPastAPartialShrink() throws IOException {
        try (MockVllmWorker w = refWorker("partial-shm").build()) {
            w.register();
            w.fillBlocks(blockIds(4), PATTERN);

            // One page left: blocks 0-3 of 1024 bytes all lie in the first page, so a save still works; cut to 0 and
            // the same save fails.
            shrink(w, 4096);
            w.save(blockIds(4), BlockPattern.hashes(700, 4));
            shrink(w, 0);
            assertStatus(() -> w.save(blockIds(4), BlockPattern.hashes(701, 4)), Status.Code.INTERNAL, COPY_FAILED);
            scheduler.awaitHits(w.instanceId(), BlockPattern.hashes(700, 4), 4, WAIT);
        }
    }
}
