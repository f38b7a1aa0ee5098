package io.pegaflow.metaserver.grpc;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.pegaflow.proto.MetaServerGrpc;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Counts and times every {@code pegaflow.MetaServer} call with the reference's metric names (spec/cluster.md §1.9):
 * {@code pegaflow_metaserver_rpc_requests_total} and {@code pegaflow_metaserver_rpc_duration_seconds}, labelled
 * {@code method} (snake_case) and {@code status} ({@code ok} or the canonical gRPC code name). An empty Insert is
 * {@code ok}, as its gRPC status is.
 */
public final class RpcMetricsInterceptor implements ServerInterceptor {

    private static final Duration[] BUCKETS = {
        Duration.ofMillis(1).dividedBy(2),
        Duration.ofMillis(1),
        Duration.ofMillis(2),
        Duration.ofMillis(5),
        Duration.ofMillis(10),
        Duration.ofMillis(20),
        Duration.ofMillis(50),
        Duration.ofMillis(100),
        Duration.ofMillis(200),
        Duration.ofMillis(500),
        Duration.ofSeconds(1),
        Duration.ofSeconds(2)
    };

    private record Meters(Counter requests, Timer duration) {}

    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, Meters> meters = new ConcurrentHashMap<>();

    public RpcMetricsInterceptor(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        if (!MetaServerGrpc.SERVICE_NAME.equals(call.getMethodDescriptor().getServiceName())) {
            return next.startCall(call, headers);
        }
        String method = snakeCase(call.getMethodDescriptor().getBareMethodName());
        long startNs = System.nanoTime();
        return next.startCall(
                new SimpleForwardingServerCall<>(call) {
                    @Override
                    public void close(Status status, Metadata trailers) {
                        record(method, status, System.nanoTime() - startNs);
                        super.close(status, trailers);
                    }
                },
                headers);
    }

    private void record(String method, Status status, long elapsedNs) {
        String code = status.isOk() ? "ok" : status.getCode().name();
        Meters m = meters.computeIfAbsent(
                method + '/' + code,
                key -> new Meters(
                        Counter.builder("pegaflow.metaserver.rpc.requests")
                                .description("MetaServer RPCs handled")
                                .tag("method", method)
                                .tag("status", code)
                                .register(registry),
                        Timer.builder("pegaflow.metaserver.rpc.duration")
                                .description("MetaServer RPC handling time")
                                .tag("method", method)
                                .tag("status", code)
                                .serviceLevelObjectives(BUCKETS)
                                .register(registry)));
        m.requests().increment();
        m.duration().record(elapsedNs, TimeUnit.NANOSECONDS);
    }

    /** {@code InsertBlockHashes} to {@code insert_block_hashes}. */
    static String snakeCase(String camel) {
        StringBuilder out = new StringBuilder(camel.length() + 4);
        for (int i = 0; i < camel.length(); i++) {
            char c = camel.charAt(i);
            if (Character.isUpperCase(c)) {
                if (i > 0) {
                    out.append('_');
                }
                out.append(Character.toLowerCase(c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
