package io.pegaflow.metaserver.node;

/**
 * A lifecycle rule refused a request: the gRPC layer maps every reason to {@code FAILED_PRECONDITION} with the
 * reference's message text ({@link Reason#wireMessage()}), so clients written for the reference react the same way.
 */
public final class SessionRejectedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why a request was refused. */
    public enum Reason {
        /** No session is registered for the address (reference: {@code UnknownNode}). */
        UNKNOWN_NODE("unknown node"),
        /** Another, live session holds the address, or the request's id is not the current one. */
        STALE_SESSION("stale node session"),
        /** The request's node_id lost its address to a takeover; it is refused for good (our addition). */
        FENCED("stale node session");

        private final String wireMessage;

        Reason(String wireMessage) {
            this.wireMessage = wireMessage;
        }

        /** The exact text the reference puts in the gRPC status description. */
        public String wireMessage() {
            return wireMessage;
        }
    }

    private final Reason reason;

    public SessionRejectedException(Reason reason, String detail) {
        super(detail, null, false, false);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
