package io.pegaflow.edge.rpc;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import org.springframework.grpc.server.exception.GrpcExceptionHandler;

/**
 * The last of an app's exception handlers: a status a service threw travels unchanged (an {@code INTERNAL} one is
 * logged), and anything else is a bug, answered {@code INTERNAL "internal error"} with the cause in the log only, so
 * no class name or message of ours reaches a client. {@link io.pegaflow.edge.EdgeConfiguration} puts it after every
 * {@code GrpcExceptionHandler} bean of the app: those map their domain exceptions and return {@code null} for the
 * rest.
 */
public final class FallbackExceptionHandler implements GrpcExceptionHandler {

    /** The description of an unexpected failure; the cause is in the server log. */
    public static final String UNEXPECTED = "internal error";

    private final InternalErrorLog log;

    public FallbackExceptionHandler(InternalErrorLog log) {
        this.log = log;
    }

    @Override
    public StatusException handleException(Throwable exception) {
        if (!carriesStatus(exception)) {
            return log.internal(UNEXPECTED, exception);
        }
        Status status = Status.fromThrowable(exception);
        Metadata trailers = Status.trailersFromThrowable(exception);
        Metadata out = trailers == null ? new Metadata() : trailers;
        if (status.getCode() == Status.Code.INTERNAL) {
            return log.internal(status.getDescription(), exception, out);
        }
        return status.asException(out);
    }

    /** Whether the service chose a status: a StatusException or StatusRuntimeException, possibly wrapped. */
    private static boolean carriesStatus(Throwable exception) {
        for (Throwable t = exception; t != null; t = t.getCause()) {
            if (t instanceof StatusException || t instanceof StatusRuntimeException) {
                return true;
            }
        }
        return false;
    }
}
