package io.pegaflow.edge.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.pegaflow.edge.EdgeTestSupport;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.proto.LoadRequest;
import io.pegaflow.proto.ReleaseRequest;
import io.pegaflow.proto.SaveRequest;
import io.pegaflow.proto.SessionRequest;
import io.pegaflow.proto.ShutdownRequest;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * The edge's status mapping and RPC metrics over a real gRPC server: what a client sees for each kind of failure,
 * what the operator's log gets, and that the metrics record the status after mapping.
 */
@Timeout(60)
class RpcEdgeTest extends EdgeTestSupport {
    private static final String METER = "pegaflow_test_rpc_requests";

    @Autowired
    MeterRegistry registry;

    @Autowired
    EdgeInterceptorChain chain;

    private final ListAppender<ILoggingEvent> log = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(InternalErrorLog.class);
    private ManagedChannel channel;
    private EngineGrpc.EngineBlockingStub stub;

    @BeforeEach
    void connect() {
        log.start();
        logger.addAppender(log);
        channel = ManagedChannelBuilder.forAddress("127.0.0.1", grpcPort())
                .usePlaintext()
                .build();
        stub = EngineGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void disconnect() throws InterruptedException {
        logger.detachAppender(log);
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    private static Status statusOf(Supplier<?> call) {
        return catchThrowableOfType(StatusRuntimeException.class, call::get).getStatus();
    }

    private double requests(String method, String status) {
        Counter c =
                registry.find(METER).tags("method", method, "status", status).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void shouldAnswerAnUnexpectedFailureWithABareInternalAndLogItsCause() {
        double before = requests("save", "INTERNAL");

        Status status = statusOf(() -> stub.save(SaveRequest.getDefaultInstance()));

        assertThat(status.getCode()).isEqualTo(Status.Code.INTERNAL);
        assertThat(status.getDescription()).isEqualTo(FallbackExceptionHandler.UNEXPECTED);
        assertThat(requests("save", "INTERNAL")).isEqualTo(before + 1);
        assertThat(log.list).hasSize(1);
        assertThat(log.list.get(0).getFormattedMessage())
                .isEqualTo("pegaflow.Engine/Save failed with INTERNAL: internal error");
        assertThat(log.list.get(0).getThrowableProxy().getClassName()).isEqualTo("java.lang.IllegalStateException");
        assertThat(log.list.get(0).getThrowableProxy().getMessage()).isEqualTo("secret detail 0xdeadbeef");
    }

    @Test
    void shouldMapADomainRefusalThroughTheAppsHandlerWithoutLogging() {
        double before = requests("load", "FAILED_PRECONDITION");

        Status status = statusOf(() -> stub.load(LoadRequest.getDefaultInstance()));

        assertThat(status.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(status.getDescription()).isEqualTo("instance x not found");
        assertThat(requests("load", "FAILED_PRECONDITION")).isEqualTo(before + 1);
        assertThat(log.list).isEmpty();
    }

    @Test
    void shouldPassAThrownStatusThroughAndLogItWhenInternal() {
        Status status = statusOf(() -> stub.release(ReleaseRequest.getDefaultInstance()));

        assertThat(status.getCode()).isEqualTo(Status.Code.INTERNAL);
        assertThat(status.getDescription()).isEqualTo("storage error: disk gone");
        assertThat(log.list)
                .extracting(ILoggingEvent::getFormattedMessage)
                .containsExactly("pegaflow.Engine/Release failed with INTERNAL: storage error: disk gone");
    }

    @Test
    void shouldCountAndTimeSuccessfulCallsButNotStreams() {
        double before = requests("health", "ok");

        stub.health(HealthRequest.getDefaultInstance());
        stub.session(SessionRequest.getDefaultInstance()).forEachRemaining(e -> {});

        assertThat(requests("health", "ok")).isEqualTo(before + 1);
        Timer timer = registry.find("pegaflow_test_rpc_duration")
                .tags("method", "health", "status", "ok")
                .timer();
        assertThat(timer).isNotNull();
        assertThat(timer.count()).isEqualTo((long) requests("health", "ok"));
        assertThat(registry.find(METER).tag("method", "session").counters()).isEmpty();
    }

    @Test
    void shouldRunMetricsOutsideTheExceptionMappingAndTheCallerContextInside() {
        assertThat(chain.interceptors())
                .extracting(i -> (Object) i.getClass())
                .containsExactly(
                        RpcMetricsInterceptor.class,
                        EdgeExceptionInterceptor.class,
                        io.pegaflow.edge.access.AdminCallerInterceptor.class);
    }

    @Test
    void shouldAdmitALoopbackCallerToAnAdminRpc() {
        assertThat(stub.shutdown(ShutdownRequest.getDefaultInstance())).isNotNull();
    }
}
