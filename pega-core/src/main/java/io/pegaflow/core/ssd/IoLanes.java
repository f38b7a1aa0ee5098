package io.pegaflow.core.ssd;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The shutdown both SSD lanes share: a dispatcher thread fed by a bounded queue hands work to an I/O pool, each I/O
 * holding one of {@code inflight} permits. Stopping means: wake the dispatcher with its stop marker, wait for it, wait
 * until every permit is back (no I/O in flight), then stop the pool. After this returns no thread touches pool memory
 * or a shard file on behalf of the lane.
 */
final class IoLanes {
    private static final long JOIN_MILLIS = 30_000;

    private IoLanes() {}

    static void stop(
            BlockingQueue<Object> queue,
            Object stopMarker,
            Thread dispatcher,
            Semaphore permits,
            int inflight,
            ExecutorService io) {
        queue.offer(stopMarker);
        try {
            dispatcher.join(JOIN_MILLIS);
            permits.acquire(inflight);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        io.shutdown();
        try {
            io.awaitTermination(JOIN_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
