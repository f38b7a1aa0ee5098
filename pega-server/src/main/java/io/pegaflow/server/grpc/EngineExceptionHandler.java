package io.pegaflow.server.grpc;

import io.grpc.Status;
import io.grpc.StatusException;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.edge.rpc.InternalErrorLog;
import io.pegaflow.sys.NativeException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.grpc.server.exception.GrpcExceptionHandler;

/**
 * Maps the engine's errors to gRPC statuses, once, for every RPC: the engine's message is already the reference's exact
 * text and travels as the description unchanged. INTERNAL ones go through {@link InternalErrorLog}, so their cause
 * reaches the log. Anything else is left to the edge's fallback.
 */
final class EngineExceptionHandler implements GrpcExceptionHandler {

    private final InternalErrorLog log;

    EngineExceptionHandler(InternalErrorLog log) {
        this.log = log;
    }

    @Override
    public @Nullable StatusException handleException(Throwable exception) {
        if (exception instanceof EngineException e) {
            return switch (e.kind()) {
                case INVALID_ARGUMENT -> status(Status.INVALID_ARGUMENT, e);
                case FAILED_PRECONDITION -> status(Status.FAILED_PRECONDITION, e);
                case UNAVAILABLE -> status(Status.UNAVAILABLE, e);
                case DEADLINE_EXCEEDED -> status(Status.DEADLINE_EXCEEDED, e);
                case RESOURCE_EXHAUSTED -> status(Status.RESOURCE_EXHAUSTED, e);
                case PERMISSION_DENIED -> status(Status.PERMISSION_DENIED, e);
                case INTERNAL ->
                    log.internal(Objects.requireNonNull(e.getMessage(), "an EngineException has its message"), e);
            };
        }
        if (exception instanceof NativeException e) {
            return log.internal("storage error: " + e.getMessage(), e);
        }
        return null;
    }

    private static StatusException status(Status code, EngineException e) {
        return code.withDescription(e.getMessage()).asException();
    }
}
