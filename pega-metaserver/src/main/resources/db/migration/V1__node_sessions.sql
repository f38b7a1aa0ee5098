-- Node lifecycle state of the metaserver (ADR 0002). Runs unchanged on H2 (default) and PostgreSQL.
-- Times are epoch milliseconds from the metaserver's clock: monotonic time does not survive a restart.

-- The current session per advertised node address (ip:port). Exactly one node_id may own an address.
CREATE TABLE meta_node (
    node_url         VARCHAR(255) NOT NULL PRIMARY KEY,
    node_id          VARCHAR(36)  NOT NULL,
    registered_at_ms BIGINT       NOT NULL,
    last_seen_at_ms  BIGINT       NOT NULL,
    takeovers        BIGINT       NOT NULL DEFAULT 0
);

-- Sessions that lost their address to a takeover. A fenced node_id is refused for good, so an old incarnation
-- cannot take the address back once the new one goes quiet. Rows are purged after the fence retention.
CREATE TABLE meta_fenced_session (
    node_id         VARCHAR(36)  NOT NULL PRIMARY KEY,
    node_url        VARCHAR(255) NOT NULL,
    fenced_at_ms    BIGINT       NOT NULL,
    superseded_by   VARCHAR(36)  NOT NULL
);

CREATE INDEX meta_fenced_session_url ON meta_fenced_session (node_url);

-- One row: bumped at every metaserver start. Clients compare it to notice that the in-memory index was lost.
CREATE TABLE meta_epoch (
    id            INT    NOT NULL PRIMARY KEY,
    epoch         BIGINT NOT NULL,
    started_at_ms BIGINT NOT NULL
);

INSERT INTO meta_epoch (id, epoch, started_at_ms) VALUES (1, 0, 0);
