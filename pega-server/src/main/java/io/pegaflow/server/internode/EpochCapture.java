package io.pegaflow.server.internode;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.pegaflow.proto.ext.MetaserverMetadata;

/**
 * Reads the metaserver's start epoch ({@code pega-metaserver-epoch}) from the headers or trailers of every response,
 * and whether a refusal says the node_id is fenced ({@code pega-metaserver-fenced}). A reference metaserver sends
 * neither; the epoch then stays unknown and nothing is re-announced, as in the reference.
 */
final class EpochCapture implements ClientInterceptor {

    /** Epoch when none was seen yet. */
    static final long UNKNOWN = -1;

    private volatile long epoch = UNKNOWN;
    private volatile boolean fenced;

    long epoch() {
        return epoch;
    }

    /** Whether the latest refusal carried the fenced trailer. */
    boolean fenced() {
        return fenced;
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void start(Listener<R> listener, Metadata headers) {
                super.start(
                        new SimpleForwardingClientCallListener<>(listener) {
                            @Override
                            public void onHeaders(Metadata responseHeaders) {
                                record(responseHeaders);
                                super.onHeaders(responseHeaders);
                            }

                            @Override
                            public void onClose(Status status, Metadata trailers) {
                                record(trailers);
                                fenced = !status.isOk()
                                        && MetaserverMetadata.FENCED_VALUE.equals(
                                                trailers.get(MetaserverMetadata.FENCED_KEY));
                                super.onClose(status, trailers);
                            }
                        },
                        headers);
            }
        };
    }

    private void record(Metadata metadata) {
        String value = metadata.get(MetaserverMetadata.EPOCH_KEY);
        if (value != null) {
            try {
                epoch = Long.parseLong(value.trim());
            } catch (NumberFormatException ignored) {
                // A malformed value is not an epoch; keep the last good one.
            }
        }
    }
}
