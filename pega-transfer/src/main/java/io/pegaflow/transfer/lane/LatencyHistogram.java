package io.pegaflow.transfer.lane;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Batch latencies in power-of-two buckets of nanoseconds: lock-free to record from any thread, 64 counters of memory,
 * and percentiles good to a factor of two, which is what a per-peer dashboard row needs. Exact figures come from the
 * benchmarks (HdrHistogram there).
 */
final class LatencyHistogram {
    private final AtomicLongArray buckets = new AtomicLongArray(64);
    private final AtomicLong max = new AtomicLong();

    void record(long nanos) {
        long v = Math.max(1, nanos);
        buckets.incrementAndGet(63 - Long.numberOfLeadingZeros(v));
        max.accumulateAndGet(v, Math::max);
    }

    /** The upper bound of the bucket holding the {@code p}-quantile, in microseconds; 0 when empty. */
    long percentileMicros(double p) {
        long total = 0;
        long[] counts = new long[64];
        for (int i = 0; i < 64; i++) {
            counts[i] = buckets.get(i);
            total += counts[i];
        }
        if (total == 0) {
            return 0;
        }
        long rank = (long) Math.ceil(p * total);
        long seen = 0;
        for (int i = 0; i < 64; i++) {
            seen += counts[i];
            if (seen >= rank) {
                long upperNanos = i >= 62 ? Long.MAX_VALUE : (2L << i) - 1;
                return Math.min(upperNanos, max.get()) / 1000;
            }
        }
        return max.get() / 1000;
    }

    long maxMicros() {
        return max.get() / 1000;
    }
}
