package io.pegaflow.metaserver.grpc;

import io.grpc.Context;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.edge.rpc.EdgeStage;
import java.util.concurrent.atomic.LongAdder;

/**
 * Skips the service method of a call that was cancelled (its deadline passed, or the client gave up) while it waited
 * for a worker: nobody would read the answer, and on a saturated metaserver doing that work anyway is what turns a
 * backlog into a collapse. gRPC has already ended such a call with its status ({@code DEADLINE_EXCEEDED} or
 * {@code CANCELLED}), which the client treats as any failed call; a write skipped this way was never applied.
 *
 * <p>A call still alive that waited longer than {@link CallWorkers#MAX_QUEUE_WAIT_NANOS} for its worker is shed: it
 * ends {@code RESOURCE_EXHAUSTED} without running, so the metaserver's time goes to calls it can still answer within
 * their deadline. Neither kind ran its method, so neither changed the index or the registry.
 */
final class ExpiredCallInterceptor implements EdgeInterceptor {

    private final LongAdder skipped = new LongAdder();
    private final LongAdder shed = new LongAdder();

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
                long waited = CallWorkers.waitedNanos();
                if (waited > CallWorkers.MAX_QUEUE_WAIT_NANOS) {
                    shed.increment();
                    call.close(
                            Status.RESOURCE_EXHAUSTED.withDescription("metaserver overloaded: the call waited "
                                    + waited / 1_000_000 + " ms for a worker"),
                            new Metadata());
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

    /** Calls answered {@code RESOURCE_EXHAUSTED} because they waited too long for a worker. */
    long shed() {
        return shed.sum();
    }

    @Override
    public EdgeStage stage() {
        return EdgeStage.REQUEST;
    }
}
