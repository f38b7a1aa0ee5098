package io.pegaflow.metaserver.node;

/**
 * The start epoch of this metaserver process: a database counter bumped at every start (shared by replicas on one
 * PostgreSQL database). Servers compare it with the last epoch they announced to; a change means the in-memory block
 * index was lost and they re-announce their resident blocks.
 */
public record MetaserverEpoch(long epoch, long startedAtMs) {

    /** Response metadata key carrying {@link #epoch()} as a decimal ASCII string on every MetaServer RPC. */
    public static final String HEADER = "pega-metaserver-epoch";

    /** Trailer set to {@code true} when a request was refused because its node_id is fenced. */
    public static final String FENCED_TRAILER = "pega-metaserver-fenced";
}
