package io.pegaflow.metaserver.index;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the TTL sweep every {@code sweep-interval-secs} (first tick at start, as the reference does) and, when
 * {@code node-refresh-secs > 0}, re-reads node sessions from the database so transitions made by other replicas
 * reach this one. One daemon thread; a failing tick is logged and the next one runs as planned.
 */
public final class LifecycleSweeper implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(LifecycleSweeper.class);

    private final MetaStore store;
    private final long sweepIntervalMs;
    private final long refreshIntervalMs;
    private final long fenceRetentionMs;
    private final LongAdder removedOwners = new LongAdder();
    private final LongAdder removedKeys = new LongAdder();
    private final LongAdder removedNodes = new LongAdder();
    /** Null while stopped. */
    private volatile @Nullable ScheduledExecutorService executor;

    public LifecycleSweeper(MetaStore store, long sweepIntervalMs, long refreshIntervalMs, long fenceRetentionMs) {
        this.store = store;
        this.sweepIntervalMs = sweepIntervalMs;
        this.refreshIntervalMs = refreshIntervalMs;
        this.fenceRetentionMs = fenceRetentionMs;
    }

    /** One sweep now, on the caller's thread; adds what it removed to the running totals. */
    public SweepStats sweepOnce() {
        SweepStats stats = store.sweep(fenceRetentionMs);
        if (!stats.isEmpty()) {
            removedOwners.add(stats.removedOwners());
            removedKeys.add(stats.removedKeys());
            removedNodes.add(stats.removedNodes());
            log.info(
                    "Sweep removed keys={} owners={} nodes={}, {} keys remaining",
                    stats.removedKeys(),
                    stats.removedOwners(),
                    stats.removedNodes(),
                    store.index().keyCount());
        }
        return stats;
    }

    @SuppressWarnings("FutureReturnValueIgnored") // the periodic tasks' futures, see below
    @Override
    public synchronized void start() {
        if (executor != null) {
            return;
        }
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "metaserver-sweeper");
            thread.setDaemon(true);
            return thread;
        });
        // The futures are not kept: guarded() logs the tasks' failures, and the tasks stop with the executor (stop()
        // shuts it down), not by cancelling the futures.
        scheduler.scheduleWithFixedDelay(
                () -> guarded("sweep", this::sweepOnce), 0, sweepIntervalMs, TimeUnit.MILLISECONDS);
        if (refreshIntervalMs > 0) {
            scheduler.scheduleWithFixedDelay(
                    () -> guarded("node refresh", store.registry()::refreshFromStore),
                    refreshIntervalMs,
                    refreshIntervalMs,
                    TimeUnit.MILLISECONDS);
        }
        executor = scheduler;
    }

    private static void guarded(String what, Runnable task) {
        try {
            task.run();
        } catch (RuntimeException e) {
            // An exception would cancel the periodic task for good; a database hiccup must not stop the sweep.
            log.warn("Metaserver {} failed; retrying at the next tick", what, e);
        }
    }

    @Override
    public synchronized void stop() {
        ScheduledExecutorService scheduler = executor;
        executor = null;
        if (scheduler != null) {
            scheduler.shutdownNow();
            try {
                scheduler.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public boolean isRunning() {
        return executor != null;
    }

    public long removedOwners() {
        return removedOwners.sum();
    }

    public long removedKeys() {
        return removedKeys.sum();
    }

    public long removedNodes() {
        return removedNodes.sum();
    }
}
