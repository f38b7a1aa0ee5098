package io.pegaflow.edge.rpc;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.Comparator;
import java.util.List;

/**
 * The one global gRPC interceptor of an app: applies its {@link EdgeInterceptor}s in {@link EdgeStage} order, the
 * first stage outermost (it sees the call first and closes last). Immutable and thread-safe.
 */
public final class EdgeInterceptorChain implements ServerInterceptor {

    private final List<EdgeInterceptor> outermostFirst;

    /** @param interceptors in bean order; the chain sorts them by stage, keeping that order within a stage */
    public EdgeInterceptorChain(List<? extends EdgeInterceptor> interceptors) {
        this.outermostFirst = interceptors.stream()
                .sorted(Comparator.comparing(EdgeInterceptor::stage))
                .map(EdgeInterceptor.class::cast)
                .toList();
    }

    /** The interceptors, outermost first. */
    public List<EdgeInterceptor> interceptors() {
        return outermostFirst;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        ServerCallHandler<Q, R> handler = next;
        for (int i = outermostFirst.size() - 1; i >= 0; i--) {
            ServerInterceptor interceptor = outermostFirst.get(i);
            ServerCallHandler<Q, R> inner = handler;
            handler = (c, h) -> interceptor.interceptCall(c, h, inner);
        }
        return handler.startCall(call, headers);
    }
}
