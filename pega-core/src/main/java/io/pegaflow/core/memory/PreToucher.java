package io.pegaflow.core.memory;

import io.pegaflow.sys.LibC;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Faults in a fresh mapping with several threads at once, so a pool is resident (and placed, under first touch or
 * {@code mbind}) before the first save instead of paying page faults on the copy path. One thread faults roughly 1 GiB
 * in a few hundred milliseconds; spreading that over cores is what cut the reference's 500 GB start-up from minutes to
 * seconds.
 *
 * <p>Threads are short-lived and joined before {@link #touch} returns, so the region is never unmapped under them. The
 * join has a deadline (decision 0016): a writer that has not finished by then makes {@link #touch} throw
 * {@link Stalled}, and the caller must then leave the mapping in place, since the writer may still be running in it.
 */
final class PreToucher {
    static final long BYTES_PER_THREAD = 1L << 30;

    /**
     * Time one writer is given: a fixed part plus a part per GiB of its chunk, about a hundred times what a core
     * takes to zero a GiB, so only a stuck writer runs into it.
     */
    static final long DEADLINE_BASE_MILLIS = 60_000;

    static final long DEADLINE_PER_GIB_MILLIS = 10_000;

    /** A writer did not finish in time; the region must stay mapped, since it may still be writing. */
    static final class Stalled extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        Stalled(String message) {
            super(message);
        }
    }

    private PreToucher() {}

    /**
     * Threads to use for {@code lengthBytes}: {@code requested} when positive, else one per started GiB up to
     * {@code cores}; never more than there are pages, never fewer than one.
     */
    static int threadCount(long lengthBytes, long pageBytes, int requested, int cores) {
        long wanted = requested > 0
                ? requested
                : Math.min(UnitScaledAllocator.ceilDiv(lengthBytes, BYTES_PER_THREAD), Math.max(1, cores));
        long pages = UnitScaledAllocator.ceilDiv(lengthBytes, pageBytes);
        return (int) Math.max(1, Math.min(wanted, pages));
    }

    /**
     * Contiguous chunks of {@code [0, lengthBytes)} for {@code threads} workers, each a whole number of pages except
     * possibly the last, so no page is faulted by two threads. Returned as {@code {offset, length}} pairs.
     */
    static List<long[]> chunks(long lengthBytes, long pageBytes, int threads) {
        long chunkBytes = HugePages.roundUp(UnitScaledAllocator.ceilDiv(lengthBytes, threads), pageBytes);
        List<long[]> chunks = new ArrayList<>(threads);
        for (long offset = 0; offset < lengthBytes; offset += chunkBytes) {
            chunks.add(new long[] {offset, Math.min(chunkBytes, lengthBytes - offset)});
        }
        return chunks;
    }

    /**
     * Writes zeros over {@code [address, address + lengthBytes)} from {@code threads} threads and waits for all of them,
     * even when interrupted (the interrupt flag is restored afterwards).
     *
     * <p>OFF-HEAP: the caller owns the mapping for the whole call and guarantees it is writable for
     * {@code lengthBytes}; every write stays inside its chunk, and chunks tile the range.
     */
    static void touch(long address, long lengthBytes, long pageBytes, int threads, String namePrefix) {
        List<long[]> chunks = chunks(lengthBytes, pageBytes, threads);
        if (chunks.size() == 1) {
            LibC.memset(address, 0, lengthBytes);
            return;
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>(chunks.size());
        for (int i = 0; i < chunks.size(); i++) {
            long[] chunk = chunks.get(i);
            Thread worker =
                    new Thread(() -> LibC.memset(address + chunk[0], 0, chunk[1]), namePrefix + "-pretouch-" + i);
            worker.setDaemon(true);
            worker.setUncaughtExceptionHandler((t, e) -> failure.compareAndSet(null, e));
            workers.add(worker);
            worker.start();
        }
        long chunkBytes = chunks.get(0)[1];
        joinAll(
                workers,
                DEADLINE_BASE_MILLIS + DEADLINE_PER_GIB_MILLIS * UnitScaledAllocator.ceilDiv(chunkBytes, 1L << 30));
        Throwable error = failure.get();
        if (error != null) {
            throw new IllegalStateException("pre-touch failed", error);
        }
    }

    /** Joins every worker, each given {@code deadlineMillis} of its own (they run side by side). */
    static void joinAll(List<Thread> workers, long deadlineMillis) {
        boolean interrupted = false;
        for (Thread worker : workers) {
            while (true) {
                try {
                    worker.join(deadlineMillis);
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (worker.isAlive()) {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
                throw new Stalled(worker.getName() + " did not finish pre-touching in " + deadlineMillis
                        + " ms; the pool's mapping is left in place because it may still be writing there");
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
