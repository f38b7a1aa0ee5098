package io.pegaflow.metaserver.node;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Durable node lifecycle state over plain JDBC: current sessions, fenced sessions and the start epoch. The schema
 * comes from the Flyway scripts in {@code db/migration}; the SQL here is the common subset of H2 and PostgreSQL.
 *
 * <p>Methods documented "inside {@link #inTransaction}" rely on the caller's transaction, so that a lifecycle
 * decision (read the row with a lock, then write) is atomic across metaserver replicas sharing one database.
 * Thread-safe.
 */
public final class JdbcNodeStore {

    private static final String NODE_COLUMNS = "node_url, node_id, registered_at_ms, last_seen_at_ms, takeovers";

    private final JdbcClient jdbc;
    private final TransactionTemplate transactions;

    public JdbcNodeStore(DataSource dataSource) {
        this.jdbc = JdbcClient.create(dataSource);
        this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    }

    /**
     * Makes every commit reach the database file before it returns, so an acknowledged lifecycle decision survives a
     * SIGKILL right after the acknowledgement. H2 otherwise writes commits in the background up to 500 ms later
     * ({@code WRITE_DELAY}); the setting persists in the database. PostgreSQL commits synchronously by default and is
     * left alone. Returns the database product name.
     */
    public String requireDurableCommits() {
        String product = jdbc.sql("SELECT 1")
                .query((rs, n) -> {
                    try {
                        return rs.getStatement().getConnection().getMetaData().getDatabaseProductName();
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                })
                .single();
        if ("H2".equals(product)) {
            jdbc.sql("SET WRITE_DELAY 0").update();
        }
        return product;
    }

    /** Runs {@code work} in one database transaction, committing when it returns and rolling back when it throws. */
    public <T> T inTransaction(Supplier<T> work) {
        return transactions.execute(status -> work.get());
    }

    /** Inside {@link #inTransaction}: the address's row, locked until the transaction ends. */
    Optional<NodeRow> lockNode(String url) {
        return jdbc.sql("SELECT " + NODE_COLUMNS + " FROM meta_node WHERE node_url = ? FOR UPDATE")
                .param(url)
                .query(JdbcNodeStore::nodeRow)
                .optional();
    }

    /** The address's row without a lock (used to reconcile memory with the database). */
    Optional<NodeRow> findNode(String url) {
        return jdbc.sql("SELECT " + NODE_COLUMNS + " FROM meta_node WHERE node_url = ?")
                .param(url)
                .query(JdbcNodeStore::nodeRow)
                .optional();
    }

    Optional<FencedSession> findFence(UUID id) {
        return jdbc.sql("SELECT node_id, node_url, fenced_at_ms, superseded_by FROM meta_fenced_session"
                        + " WHERE node_id = ?")
                .param(id.toString())
                .query(JdbcNodeStore::fencedSession)
                .optional();
    }

    void insertNode(NodeRow row) {
        jdbc.sql("INSERT INTO meta_node (" + NODE_COLUMNS + ") VALUES (?, ?, ?, ?, ?)")
                .params(row.url(), row.id().toString(), row.registeredAtMs(), row.lastSeenMs(), row.takeovers())
                .update();
    }

    /**
     * Moves the session's last-seen time forward while {@code id} still owns the address; false when it does not
     * (another instance took the address over, or the row was unregistered or swept). One statement: outside a
     * transaction it commits on its own, and the row lock it takes orders it with a concurrent takeover.
     */
    boolean updateLastSeen(String url, UUID id, long nowMs) {
        return jdbc.sql("UPDATE meta_node SET last_seen_at_ms = ? WHERE node_url = ? AND node_id = ?")
                        .params(nowMs, url, id.toString())
                        .update()
                > 0;
    }

    /** Inside {@link #inTransaction}: hands the address to {@code newId} and fences the session it replaces. */
    void takeOver(NodeRow previous, UUID newId, long nowMs) {
        jdbc.sql("UPDATE meta_node SET node_id = ?, registered_at_ms = ?, last_seen_at_ms = ?, takeovers = ?"
                        + " WHERE node_url = ? AND node_id = ?")
                .params(
                        newId.toString(),
                        nowMs,
                        nowMs,
                        previous.takeovers() + 1,
                        previous.url(),
                        previous.id().toString())
                .update();
        jdbc.sql("INSERT INTO meta_fenced_session (node_id, node_url, fenced_at_ms, superseded_by)"
                        + " VALUES (?, ?, ?, ?)")
                .params(previous.id().toString(), previous.url(), nowMs, newId.toString())
                .update();
    }

    /** Deletes the address's row only while {@code id} still owns it. */
    boolean deleteNode(String url, UUID id) {
        return jdbc.sql("DELETE FROM meta_node WHERE node_url = ? AND node_id = ?")
                        .params(url, id.toString())
                        .update()
                > 0;
    }

    boolean nodeExists(String url) {
        return jdbc.sql("SELECT COUNT(*) FROM meta_node WHERE node_url = ?")
                        .param(url)
                        .query(Long.class)
                        .single()
                > 0;
    }

    /** Deletes the row only if {@code id} still owns the address and nobody refreshed it since {@code cutoffMs}. */
    boolean deleteNodeIfIdle(String url, UUID id, long cutoffMs) {
        return jdbc.sql("DELETE FROM meta_node WHERE node_url = ? AND node_id = ? AND last_seen_at_ms < ?")
                        .params(url, id.toString(), cutoffMs)
                        .update()
                > 0;
    }

    /** Deletes fences older than {@code cutoffMs}; returns how many. */
    public int purgeFencesBefore(long cutoffMs) {
        return jdbc.sql("DELETE FROM meta_fenced_session WHERE fenced_at_ms < ?")
                .param(cutoffMs)
                .update();
    }

    /** All current sessions, ordered by address. */
    public List<NodeRow> loadNodes() {
        return jdbc.sql("SELECT " + NODE_COLUMNS + " FROM meta_node ORDER BY node_url")
                .query(JdbcNodeStore::nodeRow)
                .list();
    }

    /** All fenced sessions still retained, newest first. */
    public List<FencedSession> loadFencedSessions() {
        return jdbc.sql("SELECT node_id, node_url, fenced_at_ms, superseded_by FROM meta_fenced_session"
                        + " ORDER BY fenced_at_ms DESC, node_id")
                .query(JdbcNodeStore::fencedSession)
                .list();
    }

    /**
     * Bumps the shared start counter; called once per metaserver start. A fresh database (counter 0) starts at the
     * wall-clock millisecond instead of 1, so a database lost or wiped behind the servers' backs never hands out an
     * epoch they already saw (they re-announce only when the epoch changes).
     */
    public MetaserverEpoch startEpoch(long nowMs) {
        return inTransaction(() -> {
            jdbc.sql("UPDATE meta_epoch SET epoch = CASE WHEN epoch = 0 THEN ? ELSE epoch + 1 END, started_at_ms = ?"
                            + " WHERE id = 1")
                    .params(Math.max(1, nowMs), nowMs)
                    .update();
            return jdbc.sql("SELECT epoch, started_at_ms FROM meta_epoch WHERE id = 1")
                    .query((rs, n) -> new MetaserverEpoch(rs.getLong(1), rs.getLong(2)))
                    .single();
        });
    }

    private static NodeRow nodeRow(ResultSet rs, int rowNum) throws SQLException {
        return new NodeRow(
                rs.getString(1), UUID.fromString(rs.getString(2)), rs.getLong(3), rs.getLong(4), rs.getLong(5));
    }

    private static FencedSession fencedSession(ResultSet rs, int rowNum) throws SQLException {
        return new FencedSession(
                UUID.fromString(rs.getString(1)), rs.getString(2), rs.getLong(3), UUID.fromString(rs.getString(4)));
    }
}
