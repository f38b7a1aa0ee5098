package io.pegaflow.push.layout;

import io.pegaflow.core.error.EngineException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * How a push or receive agent waits for a layer's copy on the engine's device lane: the agent moves layer by layer, as
 * it did when it copied on its own thread, and never waits past the request's deadline plus a grace, so a copy that is
 * about to land near the deadline still counts and a stalled device fails the request instead of the agent.
 */
public final class LaneWait {
    /** Added to the request's remaining time: a healthy copy of one layer takes milliseconds. */
    static final long GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private LaneWait() {}

    /**
     * Waits for {@code copy}.
     *
     * @param remainingNanos the request's time left (0 or more)
     * @return null once every byte landed; else why the wait gave up ("did not finish within ...", "was interrupted"),
     *     while the queued copy keeps what it holds until it ran
     * @throws RuntimeException the copier's error, as it threw it
     */
    public static @Nullable String await(CompletableFuture<Void> copy, long remainingNanos) {
        long waitNanos = remainingNanos + GRACE_NANOS;
        try {
            copy.get(waitNanos, TimeUnit.NANOSECONDS);
            return null;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw EngineException.storage("the copy failed", e.getCause());
        } catch (TimeoutException e) {
            return "did not finish within " + TimeUnit.NANOSECONDS.toMillis(waitNanos)
                    + " ms (the device's copy lane is stalled)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "was interrupted";
        }
    }
}
