package io.pegaflow.core.engine;

import io.pegaflow.kernel.agent.Agent;
import io.pegaflow.kernel.agent.NanoClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's timer: every {@code pega.maintenance-interval} on the injected clock it runs one maintenance pass
 * (expired leases, stale in-flight blocks and prefetch tasks). Driven by time alone, so it idles on a parking
 * strategy; a failing pass is logged and the next one still runs.
 */
final class MaintenanceAgent implements Agent {
    private static final Logger LOG = LoggerFactory.getLogger(MaintenanceAgent.class);
    /** The longest the agent parks between clock reads, however long the interval. */
    static final long MAX_PARK_NANOS = 1_000_000_000L;

    private final NanoClock clock;
    private final long intervalNanos;
    private final Runnable pass;
    private long nextNanos;

    MaintenanceAgent(NanoClock clock, long intervalNanos, Runnable pass) {
        this.clock = clock;
        this.intervalNanos = intervalNanos;
        this.pass = pass;
    }

    @Override
    public void onStart() {
        nextNanos = clock.nanoTime() + intervalNanos;
    }

    @Override
    public int doWork() {
        long now = clock.nanoTime();
        if (now - nextNanos < 0) {
            return 0;
        }
        try {
            pass.run();
        } catch (RuntimeException e) {
            LOG.warn("maintenance pass failed", e);
        }
        nextNanos = clock.nanoTime() + intervalNanos;
        return 1;
    }

    @Override
    public String roleName() {
        return "pega-gc";
    }
}
