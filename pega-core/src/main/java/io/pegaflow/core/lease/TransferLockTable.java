package io.pegaflow.core.lease;

import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.kernel.agent.NanoClock;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Transfer locks (spec/cluster.md §3.7): while a peer reads blocks straight out of this node's pool with one-sided
 * gets, a lock session holds a reference on each of them, so eviction may drop their keys but never frees the memory
 * under the peer's reads.
 *
 * <p>A session is created by {@code QueryBlocksForTransfer} (even with no blocks, like the reference) and ends exactly
 * once, by whichever comes first: {@link #release} (the requester's {@code ReleaseTransferLock}), expiry
 * {@code timeout} after creation on the injected clock ({@link #sweep}, driven by the engine's maintenance agent and
 * run opportunistically by every lock and release), the requester's reconnection as a new incarnation
 * ({@link #releaseRequester}) or shutdown ({@link #clear}). Every end releases the session's references once; later
 * ends of the same session find nothing and return 0. The reference leaked about 270 sessions per holder in 11 h when
 * its releases were lost (its PR #399); here a session that nobody releases still ends at its deadline, so the table is
 * bounded by the lock rate times the timeout.
 *
 * <p>Thread-safe: one monitor; block references are released outside it.
 */
public final class TransferLockTable {
    /** The reference's default ({@code --transfer-lock-timeout-secs}). */
    public static final long DEFAULT_TIMEOUT_NANOS = 120_000_000_000L;

    private final NanoClock clock;
    private final long timeoutNanos;
    // Insertion order is expiry order (one timeout, monotonic clock), so a sweep stops at the first live session.
    private final Map<String, Session> sessions = new LinkedHashMap<>();
    private long lockedBlocks;
    private long created;
    private long released;
    private long expired;
    private long dropped;

    private static final class Session {
        final String requesterId;
        final SealedBlock[] blocks;
        final long expiresAtNanos;

        Session(String requesterId, SealedBlock[] blocks, long expiresAtNanos) {
            this.requesterId = requesterId;
            this.blocks = blocks;
            this.expiresAtNanos = expiresAtNanos;
        }

        void releaseBlocks() {
            for (SealedBlock block : blocks) {
                block.release();
            }
        }
    }

    /** What the table holds and has done, for metrics and the admin view. */
    public record Stats(
            int sessions, long lockedBlocks, long created, long released, long expired, long droppedByRequester) {}

    /** @param timeoutNanos how long a session lives unreleased; positive */
    public TransferLockTable(NanoClock clock, long timeoutNanos) {
        if (timeoutNanos <= 0) {
            throw new IllegalArgumentException("transfer lock timeout: " + timeoutNanos + " ns (expected: > 0)");
        }
        this.clock = clock;
        this.timeoutNanos = timeoutNanos;
    }

    public long timeoutNanos() {
        return timeoutNanos;
    }

    /**
     * Opens a session that takes over the caller's references to {@code blocks} (possibly none).
     *
     * @return the session id: a random version-4 UUID in its string form
     */
    public String lock(String requesterId, SealedBlock[] blocks) {
        List<Session> swept;
        String id;
        long now = clock.nanoTime();
        synchronized (this) {
            swept = expireLocked(now);
            do {
                id = UUID.randomUUID().toString();
            } while (sessions.containsKey(id));
            sessions.put(id, new Session(requesterId, blocks.clone(), now + timeoutNanos));
            lockedBlocks += blocks.length;
            created++;
        }
        swept.forEach(Session::releaseBlocks);
        return id;
    }

    /**
     * Ends a session: the requester's reads are over. Unknown, already released and expired ids all return 0 (the
     * reference answers OK with 0 released blocks), so a repeated or late release is harmless.
     *
     * @return the number of blocks the session held
     */
    public int release(String sessionId) {
        Session session;
        List<Session> swept;
        synchronized (this) {
            swept = expireLocked(clock.nanoTime());
            session = sessions.remove(sessionId);
            if (session != null) {
                lockedBlocks -= session.blocks.length;
                released++;
            }
        }
        swept.forEach(Session::releaseBlocks);
        if (session == null) {
            return 0;
        }
        session.releaseBlocks();
        return session.blocks.length;
    }

    /**
     * Ends every session of a requester: it reconnected as a new incarnation (a restarted process handshakes again),
     * so nothing its previous incarnation locked will ever be released by it.
     *
     * @return how many sessions ended
     */
    public int releaseRequester(String requesterId) {
        List<Session> removed = new ArrayList<>();
        synchronized (this) {
            Iterator<Session> it = sessions.values().iterator();
            while (it.hasNext()) {
                Session s = it.next();
                if (s.requesterId.equals(requesterId)) {
                    it.remove();
                    lockedBlocks -= s.blocks.length;
                    removed.add(s);
                }
            }
            dropped += removed.size();
        }
        removed.forEach(Session::releaseBlocks);
        return removed.size();
    }

    /** Ends every session older than the timeout; returns how many. */
    public int sweep() {
        List<Session> swept;
        synchronized (this) {
            swept = expireLocked(clock.nanoTime());
        }
        swept.forEach(Session::releaseBlocks);
        return swept.size();
    }

    private List<Session> expireLocked(long now) {
        List<Session> out = List.of();
        Iterator<Session> it = sessions.values().iterator();
        while (it.hasNext()) {
            Session s = it.next();
            if (now - s.expiresAtNanos < 0) {
                break;
            }
            if (out.isEmpty()) {
                out = new ArrayList<>();
            }
            it.remove();
            lockedBlocks -= s.blocks.length;
            expired++;
            out.add(s);
        }
        return out;
    }

    /** Ends every session (engine shutdown); returns how many. */
    public int clear() {
        List<Session> removed;
        synchronized (this) {
            removed = new ArrayList<>(sessions.values());
            sessions.clear();
            lockedBlocks = 0;
        }
        removed.forEach(Session::releaseBlocks);
        return removed.size();
    }

    public synchronized int size() {
        return sessions.size();
    }

    public synchronized Stats stats() {
        return new Stats(sessions.size(), lockedBlocks, created, released, expired, dropped);
    }
}
