package io.pegaflow.metaserver.grpc;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.pegaflow.metaserver.node.SessionRejectedException;
import io.pegaflow.proto.ext.MetaserverMetadata;
import org.jspecify.annotations.Nullable;
import org.springframework.grpc.server.exception.GrpcExceptionHandler;

/**
 * Maps a lifecycle refusal to {@code FAILED_PRECONDITION} with the reference's text; a refusal of a fenced id also gets
 * the {@code pega-metaserver-fenced} trailer, so its operator can tell a fence from a live competitor. Validation
 * failures are statuses already, and anything else is left to the edge's fallback.
 */
final class MetaserverExceptionHandler implements GrpcExceptionHandler {

    @Override
    public @Nullable StatusException handleException(Throwable exception) {
        if (!(exception instanceof SessionRejectedException e)) {
            return null;
        }
        Metadata trailers = new Metadata();
        if (e.reason() == SessionRejectedException.Reason.FENCED) {
            trailers.put(MetaserverMetadata.FENCED_KEY, MetaserverMetadata.FENCED_VALUE);
        }
        return Status.FAILED_PRECONDITION
                .withDescription(e.reason().wireMessage())
                .asException(trailers);
    }
}
