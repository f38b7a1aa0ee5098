package io.pegaflow.core.journal;

/**
 * The registration journal was written by a newer format than this server reads. It is refused rather than read
 * or rewritten: a newer server may be rolled back to, and this one cannot tell what the unknown records mean.
 */
public final class JournalVersionException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    JournalVersionException(String message) {
        super(message);
    }
}
