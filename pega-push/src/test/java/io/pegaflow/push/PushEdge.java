package io.pegaflow.push;

import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.edge.rpc.EdgeExceptionInterceptor;
import io.pegaflow.edge.rpc.EdgeInterceptorChain;
import io.pegaflow.edge.rpc.FallbackExceptionHandler;
import io.pegaflow.edge.rpc.InternalErrorLog;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.grpc.server.exception.CompositeGrpcExceptionHandler;
import org.springframework.grpc.server.exception.GrpcExceptionHandler;

/**
 * The edge chain a push server of these tests runs its PdPush service behind, as pega-server does: the edge's
 * exception interceptor over the engine's error mapping (pega-server's {@code EngineExceptionHandler}, which this
 * module cannot see) and the edge's fallback.
 */
final class PushEdge {
    private PushEdge() {}

    static ServerInterceptor chain() {
        InternalErrorLog log = new InternalErrorLog(Clock.systemUTC());
        GrpcExceptionHandler engineErrors = new GrpcExceptionHandler() {
            @Override
            public @Nullable StatusException handleException(Throwable exception) {
                if (!(exception instanceof EngineException e)) {
                    return null;
                }
                String message = Objects.requireNonNull(e.getMessage(), "an EngineException has its message");
                return switch (e.kind()) {
                    case INVALID_ARGUMENT ->
                        Status.INVALID_ARGUMENT.withDescription(message).asException();
                    case FAILED_PRECONDITION ->
                        Status.FAILED_PRECONDITION.withDescription(message).asException();
                    case UNAVAILABLE ->
                        Status.UNAVAILABLE.withDescription(message).asException();
                    case DEADLINE_EXCEEDED ->
                        Status.DEADLINE_EXCEEDED.withDescription(message).asException();
                    case RESOURCE_EXHAUSTED ->
                        Status.RESOURCE_EXHAUSTED.withDescription(message).asException();
                    case PERMISSION_DENIED ->
                        Status.PERMISSION_DENIED.withDescription(message).asException();
                    case INTERNAL -> log.internal(message, e);
                };
            }
        };
        return new EdgeInterceptorChain(List.of(new EdgeExceptionInterceptor(
                new CompositeGrpcExceptionHandler(engineErrors, new FallbackExceptionHandler(log)))));
    }
}
