package io.pegaflow.edge.rpc;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.edge.metrics.MetricDescriptor;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts and times every unary call of one gRPC service, as the reference's exporters do (spec/engine-api.md §2.4,
 * spec/cluster.md §1.9): a request counter and a latency histogram, both labelled {@code method} (the RPC name in
 * {@code snake_case}) and {@code status} ({@code ok} or the gRPC code name). It runs outermost
 * ({@link EdgeStage#METRICS}), so the status it records is the one the client got, after the app's exception mapping.
 * Streaming calls (the engine's Session) are not counted. Meters are cached per (method, status).
 */
public final class RpcMetricsInterceptor implements EdgeInterceptor {

    private record Meters(Counter requests, Timer duration) {}

    private final CatalogMeters meters;
    private final String serviceName;
    private final MetricDescriptor requests;
    private final MetricDescriptor duration;
    private final ConcurrentHashMap<String, Meters> cache = new ConcurrentHashMap<>();

    /**
     * @param serviceName the fully qualified service counted ({@code pegaflow.Engine}); other services pass through
     * @param requests a counter entry labelled {@code method}, {@code status}
     * @param duration a timer entry labelled {@code method}, {@code status}
     */
    public RpcMetricsInterceptor(
            CatalogMeters meters, String serviceName, MetricDescriptor requests, MetricDescriptor duration) {
        List<String> labels = List.of("method", "status");
        if (!requests.labels().equals(labels) || !duration.labels().equals(labels)) {
            throw new IllegalArgumentException("RPC meters must be labelled " + labels + ": " + requests.meterName()
                    + " " + requests.labels() + ", " + duration.meterName() + " " + duration.labels());
        }
        this.meters = meters;
        this.serviceName = serviceName;
        this.requests = requests;
        this.duration = duration;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        if (call.getMethodDescriptor().getType() != MethodType.UNARY
                || !serviceName.equals(call.getMethodDescriptor().getServiceName())) {
            return next.startCall(call, headers);
        }
        String method = snakeCase(call.getMethodDescriptor().getBareMethodName());
        Timer.Sample started = meters.startTiming();
        return next.startCall(
                new SimpleForwardingServerCall<>(call) {
                    @Override
                    public void close(Status status, Metadata trailers) {
                        Meters m = meters(
                                method, status.isOk() ? "ok" : status.getCode().name());
                        m.requests().increment();
                        started.stop(m.duration());
                        super.close(status, trailers);
                    }
                },
                headers);
    }

    private Meters meters(String method, String status) {
        return cache.computeIfAbsent(
                method + '/' + status,
                key -> new Meters(meters.counter(requests, method, status), meters.timer(duration, method, status)));
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

    @Override
    public EdgeStage stage() {
        return EdgeStage.METRICS;
    }
}
