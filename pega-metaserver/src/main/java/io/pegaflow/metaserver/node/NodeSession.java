package io.pegaflow.metaserver.node;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One session of one node address: the {@code node_id} a server process announced for its {@code ip:port}.
 *
 * <p>Owner records of the block index point at the session that wrote them, so visibility is one field read instead
 * of a map lookup per owner: a session that was superseded, unregistered or swept is {@link #ended()} and every
 * record it wrote disappears from queries at once, which is the reference's "owner id must match the node's current
 * id" rule. Thread-safe: {@code lastSeenMs} and {@code ended} are written by request threads and the sweeper.
 */
public final class NodeSession {

    private final String url;
    private final UUID id;
    private final long registeredAtMs;
    private volatile long lastSeenMs;
    /** The newest last-seen time this process knows the database holds for the session. */
    private volatile long persistedSeenMs;

    private volatile boolean ended;
    /** Owner records in the index written by this session; maintained by the index. */
    private final AtomicLong ownedBlocks = new AtomicLong();

    NodeSession(String url, UUID id, long registeredAtMs, long lastSeenMs) {
        this.url = url;
        this.id = id;
        this.registeredAtMs = registeredAtMs;
        this.lastSeenMs = lastSeenMs;
        this.persistedSeenMs = lastSeenMs;
    }

    /** Creates a detached session, for tests and benchmarks of the index that run without a registry. */
    public static NodeSession detached(String url, UUID id, long nowMs) {
        return new NodeSession(url, id, nowMs, nowMs);
    }

    public String url() {
        return url;
    }

    public UUID id() {
        return id;
    }

    public long registeredAtMs() {
        return registeredAtMs;
    }

    public long lastSeenMs() {
        return lastSeenMs;
    }

    /** True once this session lost its address (takeover), unregistered or was swept; it never becomes live again. */
    public boolean ended() {
        return ended;
    }

    /**
     * Whether blocks written by this session may be returned by queries at {@code nowMs}: the session is still the
     * current one for its address and was seen no longer than {@code staleAfterMs} ago.
     */
    public boolean isVisible(long nowMs, long staleAfterMs) {
        return !ended && nowMs - lastSeenMs <= staleAfterMs;
    }

    public long ownedBlocks() {
        return ownedBlocks.get();
    }

    /** Adjusts the owner-record count; called by the index inside its per-key atomic sections. */
    public void addOwnedBlocks(long delta) {
        ownedBlocks.addAndGet(delta);
    }

    void touch(long nowMs) {
        // A racing older timestamp must not move lastSeen backwards; losing a concurrent newer one is harmless.
        if (nowMs > lastSeenMs) {
            lastSeenMs = nowMs;
        }
    }

    long persistedSeenMs() {
        return persistedSeenMs;
    }

    /** Records that the database's row holds {@code seenMs} (or newer) for this session. */
    void persisted(long seenMs) {
        if (seenMs > persistedSeenMs) {
            persistedSeenMs = seenMs;
        }
    }

    void end() {
        ended = true;
    }

    @Override
    public String toString() {
        return url + "/" + id;
    }
}
