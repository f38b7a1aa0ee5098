package io.pegaflow.metaserver.index;

import io.pegaflow.metaserver.node.NodeSession;

/**
 * One node holding one block: the session that announced it, when it last did (epoch ms, for the TTL) and the key.
 *
 * <p>Compared by identity: one announcement of one key is one object, held by the key's owner array and by the
 * session's FIFO. The index marks it {@link #dropped} inside the key's atomic section when it leaves the array
 * (removed, replaced, swept, evicted), so the FIFO tells its dead entries apart without a map lookup each.
 */
final class OwnerRecord {

    private final NodeSession session;
    private final long registeredAtMs;
    private final BlockKey key;
    private volatile boolean dropped;

    OwnerRecord(NodeSession session, long registeredAtMs, BlockKey key) {
        this.session = session;
        this.registeredAtMs = registeredAtMs;
        this.key = key;
    }

    BlockKey key() {
        return key;
    }

    NodeSession session() {
        return session;
    }

    long registeredAtMs() {
        return registeredAtMs;
    }

    /** True once the record left its key's owner array; it never comes back. */
    boolean dropped() {
        return dropped;
    }

    void drop() {
        dropped = true;
    }
}
