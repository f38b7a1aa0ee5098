package io.pegaflow.transfer.lane;

import java.util.concurrent.locks.LockSupport;

/**
 * Spin, then park with a doubling period, reset by any work: the shape of Agrona's
 * {@code BackoffIdleStrategy}, which {@code core.agent.IdleStrategy} follows. A busy lane never parks, so a transfer
 * runs at polling speed; an idle one costs almost nothing, and wakes within {@value #MAX_PARK_NANOS} ns of network
 * traffic (over UCX TCP the target must progress to serve a peer's get) or at once for a command (unpark).
 */
final class BackoffIdle {
    static final int SPINS = 2_000;
    static final long MIN_PARK_NANOS = 1_000;
    static final long MAX_PARK_NANOS = 1_000_000;

    private int idleCycles;
    private long parkNanos = MIN_PARK_NANOS;

    void idle(int workCount) {
        if (workCount > 0) {
            idleCycles = 0;
            parkNanos = MIN_PARK_NANOS;
            return;
        }
        idleCycles++;
        if (idleCycles <= SPINS) {
            Thread.onSpinWait();
        } else {
            LockSupport.parkNanos(parkNanos);
            parkNanos = Math.min(parkNanos * 2, MAX_PARK_NANOS);
        }
    }
}
