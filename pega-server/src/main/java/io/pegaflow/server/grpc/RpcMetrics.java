package io.pegaflow.server.grpc;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.springframework.stereotype.Component;

/**
 * {@code pegaflow_rpc_requests_total{method,status}} and {@code pegaflow_rpc_duration_seconds{method,status}} with
 * the reference's buckets (spec/engine-api.md §2.4). Meters are cached per (method, status) so a call costs two map
 * lookups, not a registry search.
 */
@Component
public class RpcMetrics {
    private static final Duration[] BUCKETS = {
        Duration.ofNanos(500_000),
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

    private record Meters(Counter count, Timer duration) {}

    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, Meters> meters = new ConcurrentHashMap<>();

    public RpcMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    void record(String method, String status, long nanos) {
        Meters m = meters.computeIfAbsent(method + '\0' + status, k -> create(method, status));
        m.count().increment();
        m.duration().record(nanos, TimeUnit.NANOSECONDS);
    }

    private Meters create(String method, String status) {
        Counter count = Counter.builder("pegaflow_rpc_requests")
                .description("Engine RPCs by method and status")
                .tag("method", method)
                .tag("status", status)
                .register(registry);
        Timer duration = Timer.builder("pegaflow_rpc_duration")
                .description("Engine RPC latency by method and status")
                .tag("method", method)
                .tag("status", status)
                .serviceLevelObjectives(BUCKETS)
                .register(registry);
        return new Meters(count, duration);
    }
}
