package io.pegaflow.server.internode;

/** Where the link to the metaserver stands, for health checks ({@link MetaserverHealthIndicator}). */
public enum MetaserverLink {
    /** No answer yet since start. */
    CONNECTING,
    /** The last call went through. */
    UP,
    /** The last call failed; the client retries with backoff and drops what it would have announced. */
    FAILING,
    /** The metaserver refused this node_id for good: another process took the address over. */
    FENCED
}
