package io.pegaflow.server.internode;

import io.pegaflow.kernel.agent.CommandQueue;
import io.pegaflow.kernel.agent.IdleStrategy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bounded way from the engine's sealing and eviction paths to the metaserver client's agent. {@link #offer} never
 * blocks: a full (or closed) queue drops the announcement and counts its hashes, so a slow or dead metaserver never
 * slows Save, Query or Load. The agent {@link #drain}s what is queued into one folded {@link CommandBatch}.
 */
final class AnnouncementQueue {
    private static final Logger LOG = LoggerFactory.getLogger(AnnouncementQueue.class);

    private final CommandQueue<Announcement> queue;
    private final MetaserverClientStats stats;

    AnnouncementQueue(int depth, MetaserverClientStats stats) {
        this.queue = new CommandQueue<>(Announcement.class, depth);
        this.stats = stats;
    }

    /** Queues {@code announcement} or drops and counts it. Any thread; never blocks. */
    void offer(Announcement announcement) {
        int count = announcement.hashes().size();
        if (count == 0) {
            return;
        }
        boolean insert = announcement.insert();
        if (queue.offer(announcement) == CommandQueue.Offer.ACCEPTED) {
            (insert ? stats.registrationBlocks : stats.removalBlocks).add(count);
            return;
        }
        (insert ? stats.registrationQueueFull : stats.removalQueueFull).add(count);
        LOG.debug("Metaserver queue full or closed: dropped {} hashes of {}", count, announcement.namespace());
    }

    /** Agent thread: everything queued now, folded into one batch; empty when nothing was queued. */
    Optional<CommandBatch> drain() {
        List<Announcement> drained = new ArrayList<>();
        queue.drain(drained::add, queue.capacity());
        return drained.isEmpty() ? Optional.empty() : Optional.of(CommandBatch.of(drained));
    }

    /** Idles the agent until an announcement arrives, or for at most {@code maxWaitNanos}. */
    IdleStrategy idleStrategy(long maxWaitNanos) {
        return queue.idleStrategy(maxWaitNanos);
    }

    /** Refuses every later announcement (counted as dropped); returns how many queued ones are dropped with it. */
    int close() {
        return queue.close().size();
    }
}
