package io.pegaflow.metaserver.index;

import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.agent.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the TTL sweep every {@code sweep-interval-secs} (first tick at start, as the reference does) and, when
 * {@code node-refresh-secs > 0}, re-reads node sessions from the database so transitions made by other replicas
 * reach this one. One agent ({@code metaserver-sweeper}, a kernel {@link Ticker}); a failing tick is logged and the
 * next one runs as planned.
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
    private volatile @Nullable AgentRunner runner;

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

    /** Node sessions from the database, then the index's shared state (the Redis backend's epoch). */
    private void refresh() {
        store.registry().refreshFromStore();
        store.index().refresh();
    }

    @Override
    public synchronized void start() {
        if (runner != null) {
            return;
        }
        List<Ticker.Tick> ticks = new ArrayList<>();
        ticks.add(Ticker.Tick.every("metaserver sweep", 0, sweepIntervalMs, TimeUnit.MILLISECONDS, this::sweepOnce));
        if (refreshIntervalMs > 0) {
            ticks.add(Ticker.Tick.every(
                    "metaserver node refresh",
                    refreshIntervalMs,
                    refreshIntervalMs,
                    TimeUnit.MILLISECONDS,
                    this::refresh));
        }
        runner = new Ticker("metaserver-sweeper", NanoClock.SYSTEM, ticks).start();
    }

    @Override
    public synchronized void stop() {
        AgentRunner r = runner;
        runner = null;
        if (r != null) {
            r.close(5, TimeUnit.SECONDS);
        }
    }

    @Override
    public boolean isRunning() {
        return runner != null;
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
