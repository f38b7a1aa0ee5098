package io.pegaflow.transfer;

import org.jspecify.annotations.Nullable;

/**
 * Every failure of the transfer engine, with a {@link Kind} that decides how a caller degrades: a bad argument is a
 * caller bug or a hostile peer, everything about a peer is a miss for the caller and a reconnect later.
 */
public final class TransferException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What went wrong. */
    public enum Kind {
        /** An operation names memory outside the registered regions, or has no bytes. */
        INVALID_ARGUMENT,
        /** A handshake descriptor that does not decode: garbage, truncated, foreign or corrupt. */
        INVALID_DESCRIPTOR,
        /** A well-formed descriptor of a peer this node cannot pair with (connections per peer, NIC count, fabric). */
        INCOMPATIBLE_PEER,
        /** No established connection to the peer: never connected, or dropped after a failure. */
        NOT_CONNECTED,
        /** The peer's endpoint reported an error (peer gone, connection reset) or refused the operation. */
        PEER_FAILED,
        /** An operation did not complete by its deadline; the connection is dropped. */
        TIMEOUT,
        /** A lane's queue is full: more batches in flight than the engine takes; retry later or shed load. */
        BUSY,
        /** The engine is closing or closed. */
        CLOSED,
        /** Configuration or UCX initialisation failed at startup. */
        INIT_FAILED
    }

    private final Kind kind;

    public TransferException(Kind kind, String message) {
        this(kind, message, null);
    }

    public TransferException(Kind kind, String message, @Nullable Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
