package io.pegaflow.metaserver.grpc;

import io.grpc.Context;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.edge.rpc.EdgeStage;
import java.util.concurrent.atomic.LongAdder;

/**
 * Skips the service method of a call that was cancelled (its deadline passed, or the client gave up) while it waited
 * for a worker: nobody would read the answer, and on a saturated metaserver doing that work anyway is what turns a
 * backlog into a collapse. gRPC has already ended such a call with its status ({@code DEADLINE_EXCEEDED} or
 * {@code CANCELLED}), which the client treats as any failed call; a write skipped this way was never applied.
 */
final class ExpiredCallInterceptor implements EdgeInterceptor {

    private final LongAdder skipped = new LongAdder();

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        return new SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {
            @Override
            public void onHalfClose() {
                // A unary method runs at half-close; the listener runs with the call's context attached.
                if (Context.current().isCancelled()) {
                    skipped.increment();
                    return;
                }
                super.onHalfClose();
            }
        };
    }

    /** Calls whose method was skipped because they were cancelled before a worker reached them. */
    long skipped() {
        return skipped.sum();
    }

    @Override
    public EdgeStage stage() {
        return EdgeStage.REQUEST;
    }
}
