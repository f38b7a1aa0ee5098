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
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Counts and times every unary call of one gRPC service, as the reference's exporters do ({@code docs/metrics.md}): a
 * request counter and a latency histogram, both labelled {@code method} (the RPC name in {@code snake_case}) and
 * {@code status} ({@code ok} or the gRPC code name). It runs outermost ({@link EdgeStage#METRICS}), so the status it
 * records is the one the client got, after the app's exception mapping. Streaming calls (the engine's Session) are not
 * counted. Meters are cached per method and status code, so a call costs one map lookup by the method's full name (a
 * string whose hash is cached) and an array read, with no string built per call.
 */
public final class RpcMetricsInterceptor implements EdgeInterceptor {

    private record Meters(Counter requests, Timer duration) {}

    /** One method's label and its meters by {@link Status.Code#value()}, created on first use. */
    private final class MethodMeters {
        private final String method;
        private final AtomicReferenceArray<Meters> byCode = new AtomicReferenceArray<>(Status.Code.values().length);

        MethodMeters(String method) {
            this.method = method;
        }

        Meters of(Status.Code code) {
            Meters cached = byCode.get(code.value());
            if (cached != null) {
                return cached;
            }
            String status = code == Status.Code.OK ? "ok" : code.name();
            // Micrometer returns the registered meter on a repeated registration, so a racing first use is harmless.
            Meters created =
                    new Meters(meters.counter(requests, method, status), meters.timer(duration, method, status));
            byCode.compareAndSet(code.value(), null, created);
            return byCode.get(code.value());
        }
    }

    private final CatalogMeters meters;
    private final String serviceName;
    private final MetricDescriptor requests;
    private final MetricDescriptor duration;
    private final ConcurrentHashMap<String, MethodMeters> byMethod = new ConcurrentHashMap<>();

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
        MethodMeters method = byMethod.computeIfAbsent(
                call.getMethodDescriptor().getFullMethodName(),
                name -> new MethodMeters(snakeCase(call.getMethodDescriptor().getBareMethodName())));
        Timer.Sample started = meters.startTiming();
        return next.startCall(
                new SimpleForwardingServerCall<>(call) {
                    @Override
                    public void close(Status status, Metadata trailers) {
                        Meters m = method.of(status.getCode());
                        m.requests().increment();
                        started.stop(m.duration());
                        super.close(status, trailers);
                    }
                },
                headers);
    }

    /** {@code InsertBlockHashes} to {@code insert_block_hashes}. */
    public static String snakeCase(String camel) {
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
