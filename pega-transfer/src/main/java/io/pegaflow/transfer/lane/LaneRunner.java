package io.pegaflow.transfer.lane;

import io.pegaflow.core.agent.NamedThreadFactory;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one lane's agent loop on its own thread until the lane is done, the way {@code core.agent.AgentRunner} runs an
 * {@code Agent} ({@code onStart}, {@code doWork} with an idle strategy, {@code onClose}); it is replaced by that runner
 * once it exists. An exception from one cycle is logged and the loop goes on: a lane must keep closing its endpoints
 * even when one call into the fabric failed.
 */
final class LaneRunner {
    private static final Logger LOG = LoggerFactory.getLogger(LaneRunner.class);

    private final Lane<?> lane;
    private final Thread thread;

    LaneRunner(Lane<?> lane) {
        this.lane = lane;
        this.thread = new NamedThreadFactory(lane.roleName()).newThread(this::run);
    }

    void start() {
        thread.start();
    }

    /** Waits for the loop to end; false when it is still running after the timeout. */
    boolean join(long timeoutNanos) {
        try {
            thread.join(TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + 1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    private void run() {
        BackoffIdle idle = new BackoffIdle();
        long failures = 0;
        lane.onStart();
        try {
            while (!lane.isDone()) {
                int work;
                try {
                    work = lane.doWork();
                } catch (RuntimeException e) {
                    failures++;
                    if (Long.bitCount(failures) == 1) { // 1st, 2nd, 4th, 8th...: a stuck failure cannot flood the log
                        LOG.error("{}: cycle failed ({} so far)", lane.roleName(), failures, e);
                    }
                    work = 1;
                }
                idle.idle(work);
            }
        } finally {
            lane.onClose();
        }
    }
}
