package io.pegaflow.testkit;

import io.grpc.Status;

/**
 * What one {@link MockVllmWorker#load} observed: the Load RPC's status and the load state afterwards.
 *
 * <p>When the RPC succeeded, {@code shmState} is the terminal state the server signalled ({@link LoadStateShm#SUCCESS}
 * or negative). When it failed, {@code shmState} is read right after the error arrived: the reference sets −1 before
 * returning errors that follow the shm attach, and leaves 0 for early validation errors.
 *
 * <p>Immutable value; thread-safe.
 *
 * @param status the RPC's gRPC status ({@link Status#OK} on success)
 * @param shmState the load state value as described above
 * @param shmName the {@code load_state_shm} name that was sent (already unlinked)
 */
public record LoadResult(Status status, long shmState, String shmName) {
    /** The RPC returned OK. */
    public boolean rpcOk() {
        return status.isOk();
    }

    /** The RPC returned OK and the server signalled success. */
    public boolean succeeded() {
        return status.isOk() && shmState == LoadStateShm.SUCCESS;
    }

    /** The server signalled failure through the shm (state below 0). */
    public boolean shmFailed() {
        return shmState < 0;
    }

    public Status.Code code() {
        return status.getCode();
    }

    /** The status description, or {@code ""}. */
    public String message() {
        return status.getDescription() == null ? "" : status.getDescription();
    }
}
