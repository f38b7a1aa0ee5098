package io.pegaflow.core.device.cuda;

/**
 * A {@code wrapper_bytes} payload that the restricted unpickler refuses: a forbidden opcode or global, a malformed
 * or truncated stream, or a wrapper whose content is not what the reference connector produces. The backend
 * reports it as INVALID_ARGUMENT.
 */
public final class PickleRejectedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Byte offset in the stream where decoding stopped, or -1 when the problem is the decoded content. */
    private final int offset;

    PickleRejectedException(String reason, int offset) {
        super(offset >= 0 ? reason + " (at byte " + offset + ")" : reason, null, false, false);
        this.offset = offset;
    }

    public int offset() {
        return offset;
    }
}
