package io.pegaflow.transfer.lane;

import io.pegaflow.kernel.agent.IdleStrategy;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * Spin, then park with a doubling period, reset by any work: Agrona's {@code BackoffIdleStrategy} without the yield
 * phase. The core's strategies never spin (two-core machines); a UCX lane is the exception that needs it, because
 * over UCX TCP the target's worker must progress to serve a peer's get: a busy lane never parks and a transfer runs at
 * polling speed, while an idle one spins for about a millisecond, then parks for at most {@value #MAX_PARK_NANOS} ns
 * between looks at the network. {@link #wake()} (a command for the lane) ends a park at once.
 */
final class BackoffIdle implements IdleStrategy {
    static final int SPINS = 2_000;
    static final long MIN_PARK_NANOS = 1_000;
    static final long MAX_PARK_NANOS = 1_000_000;

    private int idleCycles;
    private long parkNanos = MIN_PARK_NANOS;
    private volatile @Nullable Thread idler; // the parked thread, while it is parked
    private volatile boolean woken;

    @Override
    public void idle(int workCount) {
        if (workCount > 0 || woken) {
            idleCycles = 0;
            parkNanos = MIN_PARK_NANOS;
            woken = false;
            return;
        }
        idleCycles++;
        if (idleCycles <= SPINS) {
            Thread.onSpinWait();
            return;
        }
        idler = Thread.currentThread();
        // a wake between the flag check and the park leaves the thread's permit set, so the park returns at once
        if (!woken) {
            LockSupport.parkNanos(this, parkNanos);
        }
        idler = null;
        parkNanos = Math.min(parkNanos * 2, MAX_PARK_NANOS);
    }

    @Override
    public void wake() {
        woken = true;
        Thread t = idler;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }
}
