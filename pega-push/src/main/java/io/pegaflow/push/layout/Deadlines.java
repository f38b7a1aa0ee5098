package io.pegaflow.push.layout;

import java.util.concurrent.TimeUnit;

/**
 * How long a push or a receive may hold its staging, its request slot and its shm objects: what the client asked
 * ({@code timeout_ms}, an unsigned 64-bit value on the wire), never more than the server's setting
 * ({@code pega.pd.push-timeout}, {@code pega.pd.receive-timeout}), which is also the value of 0. A client cannot hold
 * a slot for centuries, and no value overflows.
 */
public final class Deadlines {
    private Deadlines() {}

    /** The timeout in nanoseconds for {@code timeoutMs} (read as unsigned), at most {@code ceilingNanos}. */
    public static long bounded(long timeoutMs, long ceilingNanos) {
        long ceilingMs = TimeUnit.NANOSECONDS.toMillis(ceilingNanos);
        if (timeoutMs == 0 || Long.compareUnsigned(timeoutMs, ceilingMs) >= 0) {
            return ceilingNanos;
        }
        return TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    }
}
