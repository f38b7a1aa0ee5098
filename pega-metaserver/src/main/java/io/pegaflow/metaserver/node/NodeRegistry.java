package io.pegaflow.metaserver.node;

import io.pegaflow.metaserver.node.SessionRejectedException.Reason;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DuplicateKeyException;

/**
 * The node lifecycle state machine ({@code docs/metaserver.md}), with the current session of every address kept in
 * memory for the hot paths and every transition written through to the database first.
 *
 * <p>Registration, takeover and unregister decide inside a database transaction that locks the address's row, so
 * replicas that share one PostgreSQL database agree on who owns an address; they are also serialised per address in
 * this process (striped locks). A known session's own heartbeat is one conditional statement, written only when the
 * database's time is older than a quarter of {@code stale_after} (see {@link #refreshed}). Insert and remove only {@link #touch} the in-memory session, lock-free, as the reference does.
 * Beyond the reference, a takeover fences the previous node_id in the database: that id is refused for good, across
 * metaserver restarts, instead of being allowed back once the new session goes quiet (ADR 0002).
 *
 * <p>Times come from the injected {@link Clock} (epoch milliseconds) because they are persisted; tests advance it.
 */
public final class NodeRegistry {

    private static final Logger log = LoggerFactory.getLogger(NodeRegistry.class);
    private static final int LOCK_STRIPES = 64;

    /** How an accepted heartbeat changed the registry. */
    public enum HeartbeatOutcome {
        REGISTERED,
        REFRESHED,
        TAKEOVER
    }

    /** Either a rejection (and no outcome or row) or an outcome with the node's row. */
    private record Decision(
            @Nullable HeartbeatOutcome outcome,
            @Nullable NodeRow row,
            @Nullable Reason rejection,
            String detail) {}

    private final JdbcNodeStore store;
    private final Clock clock;
    private final long staleAfterMs;
    private final long ttlMs;
    private final ConcurrentHashMap<String, NodeSession> sessions = new ConcurrentHashMap<>();
    private final Object[] locks = new Object[LOCK_STRIPES];
    private final LongAdder takeovers = new LongAdder();

    /** Loads the persisted sessions: after a restart, known nodes keep writing with their node_id at once. */
    public NodeRegistry(JdbcNodeStore store, Clock clock, long staleAfterMs, long ttlMs) {
        this.store = store;
        this.clock = clock;
        this.staleAfterMs = staleAfterMs;
        this.ttlMs = ttlMs;
        for (int i = 0; i < locks.length; i++) {
            locks[i] = new Object();
        }
        for (NodeRow row : store.loadNodes()) {
            sessions.put(row.url(), sessionOf(row));
        }
        log.info("Node registry loaded {} node sessions from the database", sessions.size());
    }

    public long staleAfterMs() {
        return staleAfterMs;
    }

    public long ttlMs() {
        return ttlMs;
    }

    /** HeartbeatNode: register, refresh (reviving a stale same-id session) or take over a stale address. */
    public HeartbeatOutcome heartbeat(String url, UUID id) throws SessionRejectedException {
        long nowMs = clock.millis();
        NodeSession known = sessions.get(url);
        if (known != null && known.id().equals(id) && !known.ended() && refreshed(known, nowMs)) {
            return HeartbeatOutcome.REFRESHED;
        }
        synchronized (lockFor(url)) {
            Decision decision;
            try {
                decision = store.inTransaction(() -> decideHeartbeat(url, id, nowMs));
            } catch (DuplicateKeyException raced) {
                // Another replica registered the address between our read and our insert: decide again.
                decision = store.inTransaction(() -> decideHeartbeat(url, id, nowMs));
            }
            Reason rejection = decision.rejection();
            if (rejection != null) {
                log.warn("Heartbeat rejected: node={} node_id={} ({})", url, id, decision.detail());
                throw new SessionRejectedException(rejection, decision.detail());
            }
            HeartbeatOutcome outcome = decision.outcome();
            NodeRow row = decision.row();
            if (outcome == null || row == null) {
                throw new IllegalStateException("an accepted heartbeat has an outcome and a row: " + decision);
            }
            NodeSession current = sessions.get(url);
            if (outcome == HeartbeatOutcome.REFRESHED
                    && current != null
                    && current.id().equals(id)
                    && !current.ended()) {
                current.touch(nowMs);
                current.persisted(nowMs);
            } else {
                replace(url, current, sessionOf(row));
            }
            if (outcome == HeartbeatOutcome.REGISTERED) {
                log.info("Node registered: node={} node_id={}", url, id);
            } else if (outcome == HeartbeatOutcome.TAKEOVER) {
                takeovers.increment();
                log.info("Node session takeover: node={} new_node_id={} ({})", url, id, decision.detail());
            }
            return outcome;
        }
    }

    /**
     * The common heartbeat, a known session refreshing itself, without the lifecycle transaction: no fence lookup
     * (a fenced id never owns a row again), no row lock held across statements, no stripe lock. The database is
     * written only when the time it holds is older than a quarter of {@code stale_after}: other instances decide
     * takeovers on that time, and a client that heartbeats every half of {@code stale_after} (the reference's
     * cadence) keeps it younger than three quarters of it. The write is one conditional statement, so a takeover by
     * another instance (which changed the row's node_id) makes it match nothing and the full decision runs, refusing
     * this id as fenced. Returns false to send the heartbeat down that path.
     */
    private boolean refreshed(NodeSession session, long nowMs) {
        if (nowMs - session.persistedSeenMs() >= staleAfterMs / 4) {
            if (!store.updateLastSeen(session.url(), session.id(), nowMs)) {
                return false;
            }
            session.persisted(nowMs);
        }
        session.touch(nowMs);
        return true;
    }

    private Decision decideHeartbeat(String url, UUID id, long nowMs) {
        Optional<FencedSession> fence = store.findFence(id);
        if (fence.isPresent()) {
            return new Decision(
                    null,
                    null,
                    Reason.FENCED,
                    "node_id was fenced when " + fence.get().supersededBy() + " took over "
                            + fence.get().url());
        }
        Optional<NodeRow> found = store.lockNode(url);
        if (found.isEmpty()) {
            NodeRow row = new NodeRow(url, id, nowMs, nowMs, 0);
            store.insertNode(row);
            return new Decision(HeartbeatOutcome.REGISTERED, row, null, "new");
        }
        NodeRow row = found.get();
        if (row.id().equals(id)) {
            store.updateLastSeen(url, id, nowMs);
            return new Decision(
                    HeartbeatOutcome.REFRESHED,
                    new NodeRow(url, id, row.registeredAtMs(), nowMs, row.takeovers()),
                    null,
                    "same session");
        }
        // Writes only touch memory, so the in-memory time can be newer than the row's for the same session.
        NodeSession local = sessions.get(url);
        long lastSeenMs = row.lastSeenMs();
        if (local != null && local.id().equals(row.id())) {
            lastSeenMs = Math.max(lastSeenMs, local.lastSeenMs());
        }
        long ageMs = nowMs - lastSeenMs;
        if (ageMs > staleAfterMs) {
            store.takeOver(row, id, nowMs);
            return new Decision(
                    HeartbeatOutcome.TAKEOVER,
                    new NodeRow(url, id, nowMs, nowMs, row.takeovers() + 1),
                    null,
                    "old_node_id=" + row.id() + " silent for " + ageMs + " ms");
        }
        return new Decision(
                null,
                null,
                Reason.STALE_SESSION,
                "address held by live node_id " + row.id() + " seen " + ageMs + " ms ago");
    }

    /**
     * The fence for Insert and Remove: the address must be registered to exactly this node_id. Refreshes the
     * session's last-seen time (in memory only, even when it was stale) and returns it. Lock-free when this instance
     * knows the session; otherwise the address's row is read from the database first.
     */
    public NodeSession touch(String url, UUID id) throws SessionRejectedException {
        NodeSession session = sessions.get(url);
        if (session == null || !session.id().equals(id)) {
            // Another instance sharing the database may have registered or taken over the address since this one
            // last refreshed: a node that fails over writes here before its next heartbeat. Ask the database.
            synchronized (lockFor(url)) {
                reconcile(url);
            }
            session = sessions.get(url);
        }
        if (session == null) {
            throw new SessionRejectedException(Reason.UNKNOWN_NODE, "no session registered for " + url);
        }
        if (!session.id().equals(id)) {
            throw new SessionRejectedException(
                    Reason.STALE_SESSION, "address " + url + " belongs to node_id " + session.id());
        }
        session.touch(clock.millis());
        return session;
    }

    /** UnregisterNode: removes the address's session if {@code id} owns it; the caller then drops its blocks. */
    public void unregister(String url, UUID id) throws SessionRejectedException {
        synchronized (lockFor(url)) {
            Reason rejection = store.inTransaction(() -> {
                if (store.deleteNode(url, id)) {
                    return null;
                }
                return store.nodeExists(url) ? Reason.STALE_SESSION : Reason.UNKNOWN_NODE;
            });
            if (rejection != null) {
                log.warn("Unregister rejected: node={} node_id={} ({})", url, id, rejection.wireMessage());
                throw new SessionRejectedException(rejection, rejection.wireMessage());
            }
            NodeSession removed = sessions.remove(url);
            if (removed != null) {
                removed.end();
            }
            log.info("Node unregistered: node={} node_id={}", url, id);
        }
    }

    /**
     * Drops sessions silent for longer than the TTL (database first, only if still idle there), purges fences older
     * than {@code fenceRetentionMs}, and returns how many sessions were removed.
     */
    public int sweepExpired(long fenceRetentionMs) {
        long nowMs = clock.millis();
        int removed = 0;
        for (NodeSession session : sessions.values()) {
            if (nowMs - session.lastSeenMs() <= ttlMs) {
                continue;
            }
            synchronized (lockFor(session.url())) {
                if (store.inTransaction(() -> store.deleteNodeIfIdle(session.url(), session.id(), nowMs - ttlMs))) {
                    removed++;
                    log.info(
                            "Node swept: node={} node_id={} silent for {} s",
                            session.url(),
                            session.id(),
                            (nowMs - session.lastSeenMs()) / 1000);
                }
                reconcile(session.url());
            }
        }
        int fences = store.purgeFencesBefore(nowMs - fenceRetentionMs);
        if (fences > 0) {
            log.info("Purged {} fenced sessions older than {} ms", fences, fenceRetentionMs);
        }
        return removed;
    }

    /**
     * Brings the in-memory sessions in line with the database, where other replicas may have registered, taken
     * over, unregistered or swept addresses, and merges their heartbeat times.
     */
    public void refreshFromStore() {
        Map<String, NodeRow> rows = new HashMap<>();
        for (NodeRow row : store.loadNodes()) {
            rows.put(row.url(), row);
        }
        for (NodeRow row : rows.values()) {
            NodeSession current = sessions.get(row.url());
            if (current != null && current.id().equals(row.id()) && !current.ended()) {
                current.touch(row.lastSeenMs());
                current.persisted(row.lastSeenMs());
            } else {
                synchronized (lockFor(row.url())) {
                    reconcile(row.url());
                }
            }
        }
        for (String url : sessions.keySet()) {
            if (!rows.containsKey(url)) {
                synchronized (lockFor(url)) {
                    reconcile(url);
                }
            }
        }
    }

    /** Caller holds the address's lock; re-reads the row because a snapshot may predate a local transition. */
    private void reconcile(String url) {
        Optional<NodeRow> row = store.findNode(url);
        NodeSession current = sessions.get(url);
        if (row.isEmpty()) {
            if (current != null && sessions.remove(url, current)) {
                current.end();
            }
        } else if (current != null && current.id().equals(row.get().id()) && !current.ended()) {
            current.touch(row.get().lastSeenMs());
            current.persisted(row.get().lastSeenMs());
        } else {
            replace(url, current, sessionOf(row.get()));
        }
    }

    private void replace(String url, @Nullable NodeSession previous, NodeSession next) {
        sessions.put(url, next);
        if (previous != null && previous != next) {
            previous.end();
        }
    }

    /** The current session of {@code url}, if any. */
    public Optional<NodeSession> session(String url) {
        return Optional.ofNullable(sessions.get(url));
    }

    /** A point-in-time copy of all current sessions. */
    public List<NodeSession> sessions() {
        return new ArrayList<>(sessions.values());
    }

    /** Current sessions by liveness at {@code nowMs}: {@code [live, stale]}; expired ones are in neither. */
    public long[] liveAndStaleCounts(long nowMs) {
        return countByAge(sessions.values(), nowMs, staleAfterMs, ttlMs);
    }

    static long[] countByAge(Collection<NodeSession> all, long nowMs, long staleAfterMs, long ttlMs) {
        long live = 0;
        long stale = 0;
        for (NodeSession session : all) {
            long ageMs = nowMs - session.lastSeenMs();
            if (ageMs <= staleAfterMs) {
                live++;
            } else if (ageMs <= ttlMs) {
                stale++;
            }
        }
        return new long[] {live, stale};
    }

    /** Takeovers performed by this process since it started. */
    public long takeovers() {
        return takeovers.sum();
    }

    public JdbcNodeStore store() {
        return store;
    }

    private Object lockFor(String url) {
        return locks[Math.floorMod(url.hashCode(), LOCK_STRIPES)];
    }

    private static NodeSession sessionOf(NodeRow row) {
        return new NodeSession(row.url(), row.id(), row.registeredAtMs(), row.lastSeenMs());
    }
}
