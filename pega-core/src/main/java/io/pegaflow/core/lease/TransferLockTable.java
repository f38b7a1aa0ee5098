package io.pegaflow.core.lease;

import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.kernel.agent.NanoClock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * Transfer locks (as in novitalabs/pegaflow v0.22.4): while a peer reads blocks straight out of this node's pool with
 * one-sided gets, a lock session holds a reference on each of them, so eviction may drop their keys but never frees the
 * memory under the peer's reads.
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
 * <p>Locked bytes are bounded twice, so that no requester can pin the pool and starve every Save: one requester id
 * holds at most {@code maxRequesterBytes} of block footprint across its sessions, and all sessions together at most
 * {@code maxTotalBytes} (requester ids are self-declared, so the total is what stops one caller using many ids). A lock
 * over either bound is refused whole ({@link OverBound}) and keeps nothing. The operator's memory cleanup ends every
 * session at once ({@link #breakAll}), so pinned memory never outlives the operator's wish to reclaim it.
 *
 * <p>Thread-safe: one monitor; block references are released outside it.
 */
public final class TransferLockTable {
    /** The reference's default ({@code --transfer-lock-timeout-secs}). */
    public static final long DEFAULT_TIMEOUT_NANOS = 120_000_000_000L;

    private final NanoClock clock;
    private final long timeoutNanos;
    private final long maxRequesterBytes;
    private final long maxTotalBytes;
    // Insertion order is expiry order (one timeout, monotonic clock), so a sweep stops at the first live session.
    private final Map<String, Session> sessions = new LinkedHashMap<>();
    private final Map<String, Long> bytesByRequester = new HashMap<>();
    private long lockedBlocks;
    private long lockedBytes;
    private long created;
    private long refused;
    private long broken;
    private long released;
    private long expired;
    private long dropped;

    private static final class Session {
        final String requesterId;
        final SealedBlock[] blocks;
        final long bytes;
        final long expiresAtNanos;

        Session(String requesterId, SealedBlock[] blocks, long bytes, long expiresAtNanos) {
            this.requesterId = requesterId;
            this.blocks = blocks;
            this.bytes = bytes;
            this.expiresAtNanos = expiresAtNanos;
        }

        void releaseBlocks() {
            for (SealedBlock block : blocks) {
                block.release();
            }
        }
    }

    /**
     * What the table holds and has done, for metrics and the admin view.
     *
     * @param refused locks refused whole because they would have passed a bound
     * @param broken sessions the operator's memory cleanup ended
     */
    public record Stats(
            int sessions,
            long lockedBlocks,
            long lockedBytes,
            long created,
            long released,
            long expired,
            long droppedByRequester,
            long refused,
            long broken) {}

    /** A lock refused because it would pass a bound; nothing was locked and the caller's references were released. */
    public static final class OverBound extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final String reason;
        private final boolean perRequester;

        OverBound(String reason, boolean perRequester) {
            super(reason, null, false, false);
            this.reason = reason;
            this.perRequester = perRequester;
        }

        /** What was refused and which bound it met. */
        public String reason() {
            return reason;
        }

        /** True when the requester's own share was the bound, false when it was the table's total. */
        public boolean perRequester() {
            return perRequester;
        }
    }

    /** A table with no byte bounds (tests and tools). */
    public TransferLockTable(NanoClock clock, long timeoutNanos) {
        this(clock, timeoutNanos, Long.MAX_VALUE, Long.MAX_VALUE);
    }

    /**
     * @param timeoutNanos how long a session lives unreleased; positive
     * @param maxRequesterBytes most block bytes one requester id may hold locked across its sessions; positive
     * @param maxTotalBytes most block bytes all sessions may hold locked together; positive
     */
    public TransferLockTable(NanoClock clock, long timeoutNanos, long maxRequesterBytes, long maxTotalBytes) {
        if (timeoutNanos <= 0) {
            throw new IllegalArgumentException("transfer lock timeout: " + timeoutNanos + " ns (expected: > 0)");
        }
        if (maxRequesterBytes <= 0 || maxTotalBytes <= 0) {
            throw new IllegalArgumentException("transfer lock bounds: " + maxRequesterBytes + " bytes per requester, "
                    + maxTotalBytes + " bytes in all (expected: > 0)");
        }
        this.clock = clock;
        this.timeoutNanos = timeoutNanos;
        this.maxRequesterBytes = maxRequesterBytes;
        this.maxTotalBytes = maxTotalBytes;
    }

    public long timeoutNanos() {
        return timeoutNanos;
    }

    public long maxRequesterBytes() {
        return maxRequesterBytes;
    }

    public long maxTotalBytes() {
        return maxTotalBytes;
    }

    /**
     * Opens a session that takes over the caller's references to {@code blocks} (possibly none).
     *
     * @return the session id: a random version-4 UUID in its string form
     * @throws OverBound when the blocks' footprint would take the requester or the table past its bound; the caller's
     *     references are released and nothing is locked
     */
    public String lock(String requesterId, SealedBlock[] blocks) {
        long bytes = 0;
        for (SealedBlock block : blocks) {
            bytes += block.footprintBytes();
        }
        List<Session> swept;
        String id;
        @Nullable OverBound refusal = null;
        long now = clock.nanoTime();
        synchronized (this) {
            swept = expireLocked(now);
            long mine = bytesByRequester.getOrDefault(requesterId, 0L);
            if (bytes > maxRequesterBytes - mine) {
                refusal = new OverBound(
                        "transfer lock of " + blocks.length + " blocks (" + bytes + " bytes) refused: the requester"
                                + " already holds " + mine + " locked bytes and may hold at most " + maxRequesterBytes,
                        true);
            } else if (bytes > maxTotalBytes - lockedBytes) {
                refusal = new OverBound(
                        "transfer lock of " + blocks.length + " blocks (" + bytes + " bytes) refused: transfer locks"
                                + " already hold " + lockedBytes + " bytes of at most " + maxTotalBytes,
                        false);
            }
            if (refusal != null) {
                refused++;
                id = "";
            } else {
                do {
                    id = UUID.randomUUID().toString();
                } while (sessions.containsKey(id));
                sessions.put(id, new Session(requesterId, blocks.clone(), bytes, now + timeoutNanos));
                bytesByRequester.merge(requesterId, bytes, Long::sum);
                lockedBlocks += blocks.length;
                lockedBytes += bytes;
                created++;
            }
        }
        swept.forEach(Session::releaseBlocks);
        if (refusal != null) {
            for (SealedBlock block : blocks) {
                block.release();
            }
            throw refusal;
        }
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
                forget(session);
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
                    forget(s);
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
            forget(s);
            expired++;
            out.add(s);
        }
        return out;
    }

    private void forget(Session s) {
        lockedBlocks -= s.blocks.length;
        lockedBytes -= s.bytes;
        long left = bytesByRequester.getOrDefault(s.requesterId, 0L) - s.bytes;
        if (left > 0) {
            bytesByRequester.put(s.requesterId, left);
        } else {
            bytesByRequester.remove(s.requesterId);
        }
    }

    /** Ends every session (engine shutdown); returns how many. */
    public int clear() {
        List<Session> removed;
        synchronized (this) {
            removed = new ArrayList<>(sessions.values());
            sessions.clear();
            bytesByRequester.clear();
            lockedBlocks = 0;
            lockedBytes = 0;
        }
        removed.forEach(Session::releaseBlocks);
        return removed.size();
    }

    /**
     * Ends every session for the operator's memory cleanup, counted as broken. A requester whose gets are still in
     * flight may read memory the pool hands out again; it is the operator's override, taken only on request.
     *
     * @return how many sessions ended
     */
    public int breakAll() {
        List<Session> removed;
        synchronized (this) {
            removed = new ArrayList<>(sessions.values());
            sessions.clear();
            bytesByRequester.clear();
            lockedBlocks = 0;
            lockedBytes = 0;
            broken += removed.size();
        }
        removed.forEach(Session::releaseBlocks);
        return removed.size();
    }

    public synchronized int size() {
        return sessions.size();
    }

    public synchronized Stats stats() {
        return new Stats(
                sessions.size(), lockedBlocks, lockedBytes, created, released, expired, dropped, refused, broken);
    }
}
