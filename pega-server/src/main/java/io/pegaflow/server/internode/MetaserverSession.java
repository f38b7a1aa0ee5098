package io.pegaflow.server.internode;

import io.pegaflow.kernel.agent.NanoClock;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The client side of a metaserver session as a pure state machine on an injected clock: when to heartbeat, the
 * backoff after a failure (doubling from the initial to the maximum), the {@link MetaserverLink} health reports, fencing, and
 * which metaserver epoch was last announced to. No I/O and no threads: the agent feeds it the outcome of every call,
 * and tests drive it with a hand-moved clock.
 *
 * <p>Threads: mutated by the client's agent thread only; {@link #link()}, {@link #lastFailure()} and
 * {@link #everRegistered()} are also read by health checks and are published through volatile fields.
 */
final class MetaserverSession {

    /** What a failed call changed, for the caller's log line and counters. */
    record Failure(boolean firstOfStreak, boolean fenced, boolean sessionRefused) {}

    private final NanoClock clock;
    private final @Nullable Duration heartbeatInterval;
    private final long initialBackoffNs;
    private final long maxBackoffNs;

    private boolean registered;
    private long nextHeartbeatNs;
    private long backoffNs;
    private long announcedEpoch = EpochCapture.UNKNOWN;
    private volatile boolean everRegistered;
    private volatile boolean failing;
    private volatile boolean fenced;
    private volatile String lastFailure = "";

    /**
     * @param heartbeatInterval the heartbeat period; null follows the metaserver's {@code stale_after / 2}
     * @param initialBackoff the wait after the first failure of a streak; it doubles up to {@code maxBackoff}
     */
    MetaserverSession(
            NanoClock clock, @Nullable Duration heartbeatInterval, Duration initialBackoff, Duration maxBackoff) {
        this.clock = clock;
        this.heartbeatInterval = heartbeatInterval;
        this.initialBackoffNs = initialBackoff.toNanos();
        this.maxBackoffNs = maxBackoff.toNanos();
        this.backoffNs = initialBackoffNs;
        this.nextHeartbeatNs = clock.nanoTime(); // the first heartbeat goes out at once
    }

    /** Whether the next heartbeat is due (at start, after its period, or once a backoff passed). */
    boolean heartbeatDue() {
        return clock.nanoTime() - nextHeartbeatNs >= 0;
    }

    /** Whether announcements must be dropped now: no session, and the backoff after a failure has not passed. */
    boolean inBackoff() {
        return !registered && !heartbeatDue();
    }

    /** Whether the metaserver accepted this node's session and nothing refused it since. */
    boolean registered() {
        return registered;
    }

    boolean everRegistered() {
        return everRegistered;
    }

    /**
     * A heartbeat went through.
     *
     * @param staleAfterSecs the metaserver's staleness window, which sets the period when none is configured
     * @return true when this (re-)established the session (the first success, or the first after failures)
     */
    boolean heartbeatSucceeded(long staleAfterSecs) {
        long periodNs = heartbeatInterval != null
                ? heartbeatInterval.toNanos()
                : Duration.ofSeconds(Math.max(staleAfterSecs / 2, 1)).toNanos();
        nextHeartbeatNs = clock.nanoTime() + periodNs;
        backoffNs = initialBackoffNs;
        boolean established = !everRegistered || failing;
        registered = true;
        everRegistered = true;
        failing = false;
        fenced = false;
        return established;
    }

    /**
     * A call failed: the session counts as lost, and the next heartbeat waits out the backoff, which then doubles.
     *
     * @param call what failed and its status, for health ({@code HeartbeatNode: UNAVAILABLE: ...})
     * @param sessionRefused the metaserver refused the session (FAILED_PRECONDITION: unknown, stale or fenced)
     * @param fencedNow the refusal carried the fenced trailer
     */
    Failure callFailed(String call, boolean sessionRefused, boolean fencedNow) {
        boolean first = !failing;
        registered = false;
        lastFailure = call;
        fenced = fencedNow;
        failing = true;
        nextHeartbeatNs = clock.nanoTime() + backoffNs;
        backoffNs = Math.min(backoffNs * 2, maxBackoffNs);
        return new Failure(first, fencedNow, sessionRefused);
    }

    /**
     * The client moved to another metaserver instance: heartbeat there now instead of waiting out the backoff, which
     * was earned by the instance left behind. The backoff itself keeps growing, so a client whose every instance is
     * down still slows down.
     */
    void retryNow() {
        nextHeartbeatNs = clock.nanoTime();
    }

    /** Whether the resident blocks must be announced to {@code epoch}: registered, and an epoch not announced yet. */
    boolean needsAnnouncementTo(long epoch) {
        return registered && epoch != EpochCapture.UNKNOWN && epoch != announcedEpoch;
    }

    /** Every resident block was announced to {@code epoch}. */
    void announcedTo(long epoch) {
        announcedEpoch = epoch;
    }

    MetaserverLink link() {
        if (failing) {
            return fenced ? MetaserverLink.FENCED : MetaserverLink.FAILING;
        }
        return everRegistered ? MetaserverLink.UP : MetaserverLink.CONNECTING;
    }

    /** The call that failed last and its status, or empty. */
    String lastFailure() {
        return lastFailure;
    }
}
