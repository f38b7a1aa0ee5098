package io.pegaflow.transfer.lane;

import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.transfer.TransferBatch;
import io.pegaflow.transfer.TransferException;
import io.pegaflow.transfer.TransferResult;
import java.util.BitSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * One submitted batch: its parts on the lanes and the future the caller waits on, which completes when the last part
 * has ended (and so no lane can still touch the batch's memory).
 */
final class Submission {
    final TransferBatch batch;
    /** For each operation, the index of the peer region holding its remote range (resolved once, at submit). */
    final int[] remoteRegion;

    final Connection connection;
    final long startNanos;
    final long deadlineNanos;
    private final PeerStats stats;
    private final Executor completions;
    private final CompletableFuture<TransferResult> future = new CompletableFuture<>();
    private final NanoClock clock;

    private int pendingParts;
    private final BitSet failedOps = new BitSet();
    private long failedBytes;
    private @Nullable TransferException firstFailure;

    Submission(
            TransferBatch batch,
            int[] remoteRegion,
            Connection connection,
            PeerStats stats,
            NanoClock clock,
            long timeoutNanos,
            Executor completions) {
        this.batch = batch;
        this.remoteRegion = remoteRegion;
        this.connection = connection;
        this.stats = stats;
        this.clock = clock;
        this.completions = completions;
        this.startNanos = clock.nanoTime();
        this.deadlineNanos = startNanos + timeoutNanos;
    }

    CompletableFuture<TransferResult> future() {
        return future;
    }

    /** Called once, before any part is handed to a lane. */
    synchronized void expectParts(int parts) {
        pendingParts = parts;
    }

    /** A part ended; {@code failure} null when all its operations completed. Any thread, once per part. */
    void partDone(LanePart part, @Nullable TransferException failure) {
        TransferResult result;
        synchronized (this) {
            if (failure != null) {
                for (int j = 0; j < part.ops(); j++) {
                    failedOps.set(part.opIndex(j));
                    failedBytes += part.lengthBytes(j);
                }
                if (firstFailure == null) {
                    firstFailure = failure;
                }
            }
            if (--pendingParts > 0) {
                return;
            }
            result = new TransferResult(
                    batch.direction(), batch.size(), batch.totalBytes() - failedBytes, failedOps, firstFailure);
        }
        stats.batchDone(
                batch.direction(),
                result.ops(),
                result.failedCount(),
                result.bytesTransferred(),
                clock.nanoTime() - startNanos);
        if (firstFailure != null) {
            stats.batchFailed(firstFailure);
        }
        // never run the caller's continuations on a progress thread
        completions.execute(() -> future.complete(result));
    }
}
