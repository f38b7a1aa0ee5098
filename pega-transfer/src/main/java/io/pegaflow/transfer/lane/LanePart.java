package io.pegaflow.transfer.lane;

import io.pegaflow.transfer.Direction;
import io.pegaflow.transfer.TransferException;
import org.jspecify.annotations.Nullable;

/**
 * The operations of one batch that go to one lane: operation indices {@code firstOp, firstOp + stride, ...}. A fabric's
 * lane issues them and later reports the part's end with {@link #succeed()} or {@link #fail}, on the lane's thread.
 * Reporting is idempotent: the first report wins.
 */
public final class LanePart implements Lane.Queued {
    final Submission submission;
    final int lane;
    private final int firstOp;
    private final int stride;
    private final int count;

    /** Lane-thread state: the lane's slot of the part's connection, once the lane took the part. */
    @Nullable
    Object slot;

    int nextIssue;
    private boolean done;
    /** The fabric reported success; the lane has yet to confirm it (see {@link #succeed()}). */
    private boolean awaitingConfirmation;

    LanePart(Submission submission, int lane, int firstOp, int stride, int count) {
        this.submission = submission;
        this.lane = lane;
        this.firstOp = firstOp;
        this.stride = stride;
        this.count = count;
    }

    public Direction direction() {
        return submission.batch.direction();
    }

    /** Operations in this part. */
    public int ops() {
        return count;
    }

    /** The batch index of this part's {@code j}-th operation. */
    public int opIndex(int j) {
        return firstOp + j * stride;
    }

    public long localAddress(int j) {
        return submission.batch.localAddress(opIndex(j));
    }

    public long remoteAddress(int j) {
        return submission.batch.remoteAddress(opIndex(j));
    }

    public long lengthBytes(int j) {
        return submission.batch.lengthBytes(opIndex(j));
    }

    /** Index into the peer's region table (and so into the lane endpoint's unpacked remote keys). */
    public int remoteRegion(int j) {
        return submission.remoteRegion[opIndex(j)];
    }

    /**
     * The fabric reports every operation of the part completed. Lane thread only. The lane takes this as final only
     * after the fabric's current progress step, and only if the connection has not failed meanwhile: UCX 1.13 completes
     * a pending flush successfully when it purges a failed endpoint's requests, before it calls the endpoint's error
     * handler, so a success reported inside a failure is no proof that the bytes arrived.
     */
    public void succeed() {
        if (done || awaitingConfirmation) {
            return;
        }
        if (slot instanceof PartOwner owner) {
            awaitingConfirmation = true;
            owner.partFlushed(this);
        } else {
            end(null);
        }
    }

    /** The part's operations failed (all of them: the lane cannot tell which landed). Lane thread only. */
    public void fail(TransferException cause) {
        end(cause);
    }

    boolean isDone() {
        return done;
    }

    /** Ends a part the fabric reported complete: successfully, unless {@code failure} says why it cannot be trusted. */
    void confirm(@Nullable TransferException failure) {
        awaitingConfirmation = false;
        end(failure);
    }

    /** Ends a part that never reached a lane (its queue was full); submitting thread. */
    void reject(TransferException cause) {
        done = true;
        submission.partDone(this, cause);
    }

    private void end(@Nullable TransferException cause) {
        if (done) {
            return;
        }
        done = true;
        TransferException recorded = submission.connection.failure();
        if (cause != null && recorded != null) {
            cause = recorded; // a cancellation by the close reports why the connection closed
        }
        if (slot instanceof PartOwner owner) {
            owner.partEnded(this);
        }
        submission.partDone(this, cause);
    }

    /** Where a part lives on its lane, told when the part ends. */
    interface PartOwner {
        /** The fabric reported the part complete; the owner confirms it after the progress step (see succeed). */
        void partFlushed(LanePart part);

        void partEnded(LanePart part);
    }
}
