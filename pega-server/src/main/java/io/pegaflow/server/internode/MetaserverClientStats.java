package io.pegaflow.server.internode;

import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of the metaserver client, exported with the reference's names: units are hashes, except heartbeat failures,
 * session resets, unregister failures and re-announcements, which count events.
 */
public final class MetaserverClientStats {

    final LongAdder registrationBlocks = new LongAdder();
    final LongAdder registrationFailures = new LongAdder();
    final LongAdder registrationQueueFull = new LongAdder();
    final LongAdder removalBlocks = new LongAdder();
    final LongAdder removalFailures = new LongAdder();
    final LongAdder removalQueueFull = new LongAdder();
    final LongAdder heartbeatFailures = new LongAdder();
    final LongAdder sessionResets = new LongAdder();
    final LongAdder unregisterFailures = new LongAdder();
    final LongAdder reannouncements = new LongAdder();
    final LongAdder reannouncedBlocks = new LongAdder();
    final LongAdder failovers = new LongAdder();

    /** Hashes of sealed blocks accepted into the queue. */
    public long registrationBlocks() {
        return registrationBlocks.sum();
    }

    /** Hashes whose Insert was dropped: metaserver unreachable, in backoff, or refused. */
    public long registrationFailures() {
        return registrationFailures.sum();
    }

    /** Hashes of sealed blocks dropped because the queue was full. */
    public long registrationQueueFull() {
        return registrationQueueFull.sum();
    }

    public long removalBlocks() {
        return removalBlocks.sum();
    }

    public long removalFailures() {
        return removalFailures.sum();
    }

    public long removalQueueFull() {
        return removalQueueFull.sum();
    }

    public long heartbeatFailures() {
        return heartbeatFailures.sum();
    }

    /** Times the metaserver refused this node's session (unknown or stale), so it must heartbeat again. */
    public long sessionResets() {
        return sessionResets.sum();
    }

    public long unregisterFailures() {
        return unregisterFailures.sum();
    }

    /** Completed re-announcements of all resident blocks after the metaserver's epoch changed. */
    public long reannouncements() {
        return reannouncements.sum();
    }

    /** Hashes sent by re-announcements. */
    public long reannouncedBlocks() {
        return reannouncedBlocks.sum();
    }

    /** Moves to the next metaserver address after the current one ended a call UNAVAILABLE or DEADLINE_EXCEEDED. */
    public long failovers() {
        return failovers.sum();
    }
}
