package io.pegaflow.core.error;

import org.jspecify.annotations.Nullable;

/**
 * The one error type the engine throws across its API. Its {@link Kind} decides the gRPC status at the boundary, and
 * {@link #getMessage()} is already the exact text the reference server sends, so the adapter maps it once and adds
 * nothing.
 */
public final class EngineException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Error classes of the reference engine (novitalabs/pegaflow v0.22.4), with the gRPC code each maps to. */
    public enum Kind {
        /** INVALID_ARGUMENT. */
        INVALID_ARGUMENT,
        /** FAILED_PRECONDITION: unknown instance, device, fenced or unconfigured feature. */
        FAILED_PRECONDITION,
        /** INTERNAL: storage, device and lease-consumption failures. */
        INTERNAL,
        /** UNAVAILABLE: the engine is shutting down. */
        UNAVAILABLE,
        /** DEADLINE_EXCEEDED (ours): a Save's copy or seal did not finish within {@code pega.save-deadline}. */
        DEADLINE_EXCEEDED,
        /** RESOURCE_EXHAUSTED (ours): a bounded engine queue (sealing, a device lane) is full. */
        RESOURCE_EXHAUSTED,
        /** PERMISSION_DENIED (ours): the caller is not the principal that owns the instance id (decision 0011). */
        PERMISSION_DENIED
    }

    private final Kind kind;

    private EngineException(Kind kind, String message, @Nullable Throwable cause) {
        super(message, cause, false, false);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }

    /** A core validation failure, reported as {@code "invalid argument: {msg}"}. */
    public static EngineException invalidArgument(String msg) {
        return new EngineException(Kind.INVALID_ARGUMENT, "invalid argument: " + msg, null);
    }

    /** An RPC-boundary validation failure whose text is sent as is. */
    public static EngineException badRequest(String exactMessage) {
        return new EngineException(Kind.INVALID_ARGUMENT, exactMessage, null);
    }

    public static EngineException instanceMissing(String instanceId) {
        return new EngineException(Kind.FAILED_PRECONDITION, "instance " + instanceId + " not found", null);
    }

    public static EngineException workerMissing(String instanceId, int deviceId) {
        return new EngineException(
                Kind.FAILED_PRECONDITION, "device " + deviceId + " not found in instance " + instanceId, null);
    }

    public static EngineException topologyMismatch(String msg) {
        return new EngineException(Kind.FAILED_PRECONDITION, "topology mismatch: " + msg, null);
    }

    /** A precondition failure whose text is sent as is. */
    public static EngineException failedPrecondition(String exactMessage) {
        return new EngineException(Kind.FAILED_PRECONDITION, exactMessage, null);
    }

    /** A storage-layer failure, reported as {@code "storage error: {msg}"}. */
    public static EngineException storage(String msg) {
        return new EngineException(Kind.INTERNAL, "storage error: " + msg, null);
    }

    public static EngineException storage(String msg, @Nullable Throwable cause) {
        return new EngineException(Kind.INTERNAL, "storage error: " + msg, cause);
    }

    /** Device bring-up failure, reported as {@code "failed to initialize CUDA: {msg}"}. */
    public static EngineException cudaInit(String msg, @Nullable Throwable cause) {
        return new EngineException(Kind.INTERNAL, "failed to initialize CUDA: " + msg, cause);
    }

    /** An internal failure whose text is sent as is (for example {@code "register tensor failed: ..."}). */
    public static EngineException internal(String exactMessage, @Nullable Throwable cause) {
        return new EngineException(Kind.INTERNAL, exactMessage, cause);
    }

    public static EngineException unavailable(String exactMessage) {
        return new EngineException(Kind.UNAVAILABLE, exactMessage, null);
    }

    /** A wait that reached its deadline; the text is sent as is. */
    public static EngineException deadlineExceeded(String exactMessage) {
        return new EngineException(Kind.DEADLINE_EXCEEDED, exactMessage, null);
    }

    /** A bounded queue that was full; the text is sent as is. */
    public static EngineException permissionDenied(String exactMessage) {
        return new EngineException(Kind.PERMISSION_DENIED, exactMessage, null);
    }

    public static EngineException resourceExhausted(String exactMessage) {
        return new EngineException(Kind.RESOURCE_EXHAUSTED, exactMessage, null);
    }
}
