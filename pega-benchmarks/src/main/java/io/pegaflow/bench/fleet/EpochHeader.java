package io.pegaflow.bench.fleet;

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
import java.util.function.LongConsumer;
import org.jspecify.annotations.Nullable;

/**
 * Hands the {@code pega-metaserver-epoch} of every response (headers, or trailers of a trailers-only failure) to the
 * {@link LongConsumer} the call carries in {@link #SINK}: on a channel shared by hundreds of simulated nodes the epoch
 * must reach the node that made the call, as each server's own channel delivers it to that server.
 */
final class EpochHeader implements ClientInterceptor {

    static final CallOptions.Key<@Nullable LongConsumer> SINK = CallOptions.Key.create("pega-fleet-epoch-sink");

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        LongConsumer sink = options.getOption(SINK);
        if (sink == null) {
            return next.newCall(method, options);
        }
        return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void start(Listener<R> listener, Metadata headers) {
                super.start(
                        new SimpleForwardingClientCallListener<>(listener) {
                            @Override
                            public void onHeaders(Metadata responseHeaders) {
                                deliver(sink, responseHeaders);
                                super.onHeaders(responseHeaders);
                            }

                            @Override
                            public void onClose(Status status, Metadata trailers) {
                                deliver(sink, trailers);
                                super.onClose(status, trailers);
                            }
                        },
                        headers);
            }
        };
    }

    private static void deliver(LongConsumer sink, Metadata metadata) {
        String epoch = metadata.get(MetaserverMetadata.EPOCH_KEY);
        if (epoch != null) {
            try {
                sink.accept(Long.parseLong(epoch));
            } catch (NumberFormatException ignored) {
                // not a metaserver of ours: nothing to re-announce to
            }
        }
    }
}
