package io.pegaflow.node;

import io.pegaflow.transfer.TransferException;
import io.pegaflow.transfer.TransferKeys;
import java.util.function.Supplier;

/** One step of a UCX engine's startup, whose failure is reported as one line that starts with the key to change. */
public final class UcxStep {
    private UcxStep() {}

    /**
     * Runs {@code step}; a refusal from UCX or JUCX becomes an {@link IllegalArgumentException} whose message starts
     * with the {@code pega.*} key under {@code keys} that caused it (startup prints such a message as its one line).
     */
    public static <T> T run(TransferKeys keys, Supplier<T> step) {
        try {
            return step.get();
        } catch (TransferException e) {
            String message = e.getMessage();
            throw new IllegalArgumentException(
                    message != null && message.startsWith("pega.") ? message : keys.nics() + ": " + message, e);
        } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
            throw new IllegalArgumentException(
                    keys.enabled() + ": true, but UCX cannot be loaded (install Debian's libucx0): " + e.getMessage(),
                    e);
        }
    }
}
