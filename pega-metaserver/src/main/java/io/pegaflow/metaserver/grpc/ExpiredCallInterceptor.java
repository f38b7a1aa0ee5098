package io.pegaflow.metaserver.grpc;

import io.grpc.Context;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.edge.rpc.EdgeStage;
import io.pegaflow.edge.rpc.RpcMetricsInterceptor;
import io.pegaflow.metaserver.metrics.MetaserverMetric;
import io.pegaflow.proto.MetaServerGrpc;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Skips the service method of a call that was cancelled (its deadline passed, or the client gave up) while it waited
 * for a worker: nobody would read the answer, and on a saturated metaserver doing that work anyway is what turns a
 * backlog into a collapse. gRPC has already ended such a call with its status ({@code DEADLINE_EXCEEDED} or
 * {@code CANCELLED}), which the client treats as any failed call; a write skipped this way was never applied.
 *
 * <p>A call still alive whose half-close waited longer than {@code pega.metaserver.calls.max-queue-wait-ms} for a
 * worker is shed: it ends {@code RESOURCE_EXHAUSTED} without running, so the metaserver's time goes to calls it can
 * still answer within their deadline. Neither kind ran its method, so neither changed the index or the registry. Both
 * are counted by method ({@link MetaserverMetric#PEGAFLOW_METASERVER_CALLS_SKIPPED},
 * {@link MetaserverMetric#PEGAFLOW_METASERVER_CALLS_SHED}).
 */
final class ExpiredCallInterceptor implements EdgeInterceptor {

    /** A method's two counters; the MetaServer's are registered at start, so every series exists from 0. */
    private record Counters(Counter skipped, Counter shed) {}

    private final long maxQueueWaitNanos;
    private final CatalogMeters meters;
    private final ConcurrentHashMap<String, Counters> byMethod = new ConcurrentHashMap<>();

    /** @param maxQueueWaitNanos a call that waited longer than this for a worker is shed */
    ExpiredCallInterceptor(long maxQueueWaitNanos, CatalogMeters meters) {
        this.maxQueueWaitNanos = maxQueueWaitNanos;
        this.meters = meters;
        for (MethodDescriptor<?, ?> method :
                MetaServerGrpc.getServiceDescriptor().getMethods()) {
            countersOf(method);
        }
    }

    private Counters countersOf(MethodDescriptor<?, ?> method) {
        return byMethod.computeIfAbsent(method.getFullMethodName(), name -> {
            String label = RpcMetricsInterceptor.snakeCase(method.getBareMethodName());
            return new Counters(
                    meters.counter(MetaserverMetric.PEGAFLOW_METASERVER_CALLS_SKIPPED, label),
                    meters.counter(MetaserverMetric.PEGAFLOW_METASERVER_CALLS_SHED, label));
        });
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        return new SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {
            @Override
            public void onHalfClose() {
                // A unary method runs at half-close; the listener runs with the call's context attached.
                if (Context.current().isCancelled()) {
                    countersOf(call.getMethodDescriptor()).skipped().increment();
                    return;
                }
                long waited = CallWorkers.waitedNanos();
                if (waited > maxQueueWaitNanos) {
                    countersOf(call.getMethodDescriptor()).shed().increment();
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

    @Override
    public EdgeStage stage() {
        return EdgeStage.REQUEST;
    }
}
