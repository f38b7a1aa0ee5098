package io.pegaflow.metaserver.grpc;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.edge.rpc.EdgeStage;
import io.pegaflow.proto.ext.MetaserverMetadata;
import java.util.function.LongSupplier;

/**
 * Adds {@code pega-metaserver-epoch: <epoch>} to every response: in the headers of a successful call and in the
 * trailers of one that fails before sending headers (a trailers-only response). A server that sees the value change
 * knows the index it announced to is gone (this metaserver restarted with an empty memory index, it failed over to
 * another instance, or Redis lost the shared index) and re-announces its blocks. The value is the index's epoch,
 * read per call because the Redis backend's can change while the process runs. No reference message changes. It
 * sits outside the exception mapping ({@link EdgeStage#RESPONSE_METADATA}), so mapped failures carry it too.
 */
public final class EpochHeaderInterceptor implements EdgeInterceptor {

    private final LongSupplier epoch;

    public EpochHeaderInterceptor(LongSupplier epoch) {
        this.epoch = epoch;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        String epoch = Long.toString(this.epoch.getAsLong());
        return next.startCall(
                new SimpleForwardingServerCall<>(call) {
                    private boolean headersSent;

                    @Override
                    public void sendHeaders(Metadata responseHeaders) {
                        responseHeaders.put(MetaserverMetadata.EPOCH_KEY, epoch);
                        headersSent = true;
                        super.sendHeaders(responseHeaders);
                    }

                    @Override
                    public void close(Status status, Metadata trailers) {
                        if (!headersSent) {
                            trailers.put(MetaserverMetadata.EPOCH_KEY, epoch);
                        }
                        super.close(status, trailers);
                    }
                },
                headers);
    }

    @Override
    public EdgeStage stage() {
        return EdgeStage.RESPONSE_METADATA;
    }
}
