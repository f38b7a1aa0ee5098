package io.pegaflow.server.grpc;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.stereotype.Component;

/**
 * {@code grpc} in {@code /actuator/health}: {@code DOWN} until the gRPC server has bound its port. The HTTP server can
 * come up first, so without this a probe (or an orchestrator's readiness check) could report the sidecar UP while
 * connectors are still refused.
 */
@Component("grpc")
public class GrpcServerHealthIndicator implements HealthIndicator {
    private final GrpcPort port;

    public GrpcServerHealthIndicator(GrpcPort port) {
        this.port = port;
    }

    @Override
    public Health health() {
        int bound = port.port();
        return bound < 0
                ? Health.down().withDetail("reason", "gRPC server not started").build()
                : Health.up().withDetail("port", bound).build();
    }
}
