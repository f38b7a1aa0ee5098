package io.pegaflow.edge;

import io.grpc.BindableService;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.stub.StreamObserver;
import io.pegaflow.edge.access.AdminAccess;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.edge.metrics.MetricDescriptor;
import io.pegaflow.edge.metrics.MetricType;
import io.pegaflow.edge.rpc.RpcMetricsInterceptor;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.proto.HealthResponse;
import io.pegaflow.proto.LoadRequest;
import io.pegaflow.proto.LoadResponse;
import io.pegaflow.proto.ReleaseRequest;
import io.pegaflow.proto.ReleaseResponse;
import io.pegaflow.proto.SaveRequest;
import io.pegaflow.proto.SaveResponse;
import io.pegaflow.proto.SessionEvent;
import io.pegaflow.proto.SessionRequest;
import io.pegaflow.proto.ShutdownRequest;
import io.pegaflow.proto.ShutdownResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.grpc.server.exception.GrpcExceptionHandler;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** A small app on the shared edge: one gRPC service whose methods fail in every way an app's methods can. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(EdgeConfiguration.class)
class EdgeTestApp {

    /** The test app's catalog. */
    enum TestMetric implements MetricDescriptor {
        PEGAFLOW_TEST_RPC_REQUESTS(MetricType.COUNTER, "requests", "Test RPCs by method and status"),
        PEGAFLOW_TEST_RPC_DURATION(MetricType.TIMER, "seconds", "Test RPC latency by method and status");

        private final MetricType type;
        private final String unit;
        private final String help;

        TestMetric(MetricType type, String unit, String help) {
            this.type = type;
            this.unit = unit;
            this.help = help;
        }

        @Override
        public String meterName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        @Override
        public MetricType type() {
            return type;
        }

        @Override
        public String unit() {
            return unit;
        }

        @Override
        public List<String> labels() {
            return List.of("method", "status");
        }

        @Override
        public String help() {
            return help;
        }

        @Override
        public List<Duration> buckets() {
            return type == MetricType.TIMER ? List.of(Duration.ofMillis(1), Duration.ofSeconds(1)) : List.of();
        }
    }

    /** A domain refusal the app's own handler maps. */
    static final class Refusal extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Refusal(String message) {
            super(message, null, false, false);
        }
    }

    /** The port the gRPC server bound. */
    static final class GrpcPort implements ApplicationListener<GrpcServerStartedEvent> {
        volatile int port = -1;

        @Override
        public void onApplicationEvent(GrpcServerStartedEvent event) {
            port = event.getPort();
        }
    }

    @Bean
    GrpcPort grpcPort() {
        return new GrpcPort();
    }

    @Bean
    AdminAccess adminAccess() {
        return new AdminAccess("t0ken");
    }

    @Bean
    RpcMetricsInterceptor rpcMetricsInterceptor(CatalogMeters meters) {
        return new RpcMetricsInterceptor(
                meters,
                EngineGrpc.SERVICE_NAME,
                TestMetric.PEGAFLOW_TEST_RPC_REQUESTS,
                TestMetric.PEGAFLOW_TEST_RPC_DURATION);
    }

    @Bean
    GrpcExceptionHandler refusals() {
        return e -> e instanceof Refusal r
                ? Status.FAILED_PRECONDITION.withDescription(r.getMessage()).asException()
                : null;
    }

    @Bean
    BindableService engine(AdminAccess access) {
        return new EngineGrpc.EngineImplBase() {
            @Override
            public void health(HealthRequest r, StreamObserver<HealthResponse> out) {
                out.onNext(HealthResponse.getDefaultInstance());
                out.onCompleted();
            }

            @Override
            public void save(SaveRequest r, StreamObserver<SaveResponse> out) {
                throw new IllegalStateException("secret detail 0xdeadbeef");
            }

            @Override
            public void load(LoadRequest r, StreamObserver<LoadResponse> out) {
                throw new Refusal("instance x not found");
            }

            @Override
            public void release(ReleaseRequest r, StreamObserver<ReleaseResponse> out) {
                throw Status.INTERNAL
                        .withDescription("storage error: disk gone")
                        .asRuntimeException();
            }

            @Override
            public void shutdown(ShutdownRequest r, StreamObserver<ShutdownResponse> out) {
                if (!access.permitsCurrentGrpcCall()) {
                    out.onError(new StatusException(Status.PERMISSION_DENIED.withDescription("admin only")));
                    return;
                }
                out.onNext(ShutdownResponse.getDefaultInstance());
                out.onCompleted();
            }

            @Override
            public void session(SessionRequest r, StreamObserver<SessionEvent> out) {
                out.onCompleted();
            }
        };
    }

    /** Shows what Tomcat made of the caller and what the admin rule decided. */
    @RestController
    static class PeerController {
        private final AdminAccess access;

        PeerController(AdminAccess access) {
            this.access = access;
        }

        @GetMapping("/peer")
        String peer(HttpServletRequest request) {
            return "remote=" + request.getRemoteAddr() + " admitted=" + access.permits(request);
        }

        /** A mutation, for the cross-site rule. */
        @PostMapping("/mutate")
        String mutate() {
            return "mutated";
        }
    }
}
