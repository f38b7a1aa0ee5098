package io.pegaflow.edge.rpc;

import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import java.time.Clock;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one way an error becomes {@code INTERNAL} at the edge: {@link #internal} logs it at WARN with its cause, then
 * builds the status the client gets. So a storage, device or unexpected failure reaches the operator's log exactly
 * once, where it is mapped, and never only the client. Rate-limited: at most {@value #BURST} lines per minute; the
 * next line logged says how many were left out. Thread-safe.
 */
public final class InternalErrorLog {

    private static final Logger LOG = LoggerFactory.getLogger(InternalErrorLog.class);

    /** Lines logged per window before further errors are only counted. */
    public static final int BURST = 10;

    /** The gRPC method being served, set by {@link EdgeExceptionInterceptor} for the log line. */
    static final Context.Key<String> METHOD = Context.key("pega-rpc-method");

    private final Clock clock;
    private final int burst;
    private final long windowMs;
    private long windowStartMs;
    private int loggedInWindow;
    private long notLogged;

    public InternalErrorLog(Clock clock) {
        this(clock, BURST, Duration.ofMinutes(1));
    }

    InternalErrorLog(Clock clock, int burst, Duration window) {
        this.clock = clock;
        this.burst = burst;
        this.windowMs = window.toMillis();
        this.windowStartMs = clock.millis();
    }

    /**
     * Logs {@code cause} (rate-limited) and returns {@code INTERNAL} with {@code description} and {@code trailers}.
     * The cause is not sent: the description is all the client sees.
     */
    public StatusException internal(String description, Throwable cause, Metadata trailers) {
        log(description, cause);
        return Status.INTERNAL.withDescription(description).asException(trailers);
    }

    /** {@link #internal(String, Throwable, Metadata)} without trailers. */
    public StatusException internal(String description, Throwable cause) {
        return internal(description, cause, new Metadata());
    }

    /** Whether this error was logged (false while the window's budget is spent). */
    boolean log(String description, Throwable cause) {
        long skipped;
        synchronized (this) {
            long now = clock.millis();
            if (now - windowStartMs >= windowMs || now < windowStartMs) {
                windowStartMs = now;
                loggedInWindow = 0;
            }
            if (loggedInWindow >= burst) {
                notLogged++;
                return false;
            }
            loggedInWindow++;
            skipped = notLogged;
            notLogged = 0;
        }
        String method = METHOD.get();
        String rpc = method == null ? "RPC" : method;
        if (skipped > 0) {
            LOG.warn(
                    "{} failed with INTERNAL: {} ({} earlier INTERNAL errors were not logged)",
                    rpc,
                    description,
                    skipped,
                    cause);
        } else {
            LOG.warn("{} failed with INTERNAL: {}", rpc, description, cause);
        }
        return true;
    }
}
