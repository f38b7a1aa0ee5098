package io.pegaflow.server.grpc;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.sys.NativeException;

/**
 * The one place engine errors become gRPC statuses. The engine's message is already the reference's exact text, so
 * it travels as the status description unchanged.
 */
final class GrpcErrors {
    private GrpcErrors() {}

    static StatusRuntimeException toStatus(Throwable t) {
        if (t instanceof StatusRuntimeException sre) {
            return sre;
        }
        if (t instanceof EngineException e) {
            Status code = switch (e.kind()) {
                case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
                case FAILED_PRECONDITION -> Status.FAILED_PRECONDITION;
                case INTERNAL -> Status.INTERNAL;
                case UNAVAILABLE -> Status.UNAVAILABLE;
            };
            return code.withDescription(e.getMessage()).asRuntimeException();
        }
        if (t instanceof NativeException e) {
            return Status.INTERNAL
                    .withDescription("storage error: " + e.getMessage())
                    .asRuntimeException();
        }
        return Status.INTERNAL
                .withDescription("internal error: " + t.getClass().getSimpleName() + ": " + t.getMessage())
                .withCause(t)
                .asRuntimeException();
    }

    /** The {@code status} label value: {@code ok} or the gRPC code name. */
    static String statusLabel(Throwable t) {
        return t == null ? "ok" : toStatus(t).getStatus().getCode().name();
    }
}
