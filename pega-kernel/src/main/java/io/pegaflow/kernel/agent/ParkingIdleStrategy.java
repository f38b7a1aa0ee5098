package io.pegaflow.kernel.agent;

import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Parks the agent's thread for a bounded period; {@link #wake()} unparks it. For agents that look at a clock rather
 * than a queue (maintenance timers): their {@code doWork} checks whether a deadline passed, and the park bounds how
 * late they notice.
 */
final class ParkingIdleStrategy implements IdleStrategy {
    /** How long the next park may last; read before each park, so a timer agent can sleep until its next deadline. */
    private final LongSupplier parkNanos;
    /** The thread parked in {@link #idle}, or null while none is. */
    private volatile @Nullable Thread idler;

    private volatile boolean woken;

    ParkingIdleStrategy(long maxParkNanos) {
        if (maxParkNanos <= 0) {
            throw new IllegalArgumentException("park period: " + maxParkNanos + " ns (expected: > 0)");
        }
        this.parkNanos = () -> maxParkNanos;
    }

    ParkingIdleStrategy(LongSupplier parkNanos) {
        this.parkNanos = parkNanos;
    }

    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            return;
        }
        idler = Thread.currentThread();
        // A wake between the flag check and the park leaves the thread's permit set, so the park returns at once.
        long park = parkNanos.getAsLong();
        if (!woken && park > 0) {
            LockSupport.parkNanos(this, park);
        }
        idler = null;
        woken = false;
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
