package io.pegaflow.metaserver.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.proto.HeartbeatNodeRequest;
import io.pegaflow.proto.HeartbeatNodeResponse;
import io.pegaflow.proto.MetaServerGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A call cancelled while it waited for a worker never reaches its service method; one that waited past the bound is
 * shed with {@code RESOURCE_EXHAUSTED} and never reaches it either; a call served in time does.
 */
class ExpiredCallInterceptorTest {

    private static final long LIMIT_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ExpiredCallInterceptor interceptor =
            new ExpiredCallInterceptor(LIMIT_NANOS, new CatalogMeters(registry));

    private final AtomicInteger invoked = new AtomicInteger();
    private final ServerCallHandler<HeartbeatNodeRequest, HeartbeatNodeResponse> method =
            (call, headers) -> new ServerCall.Listener<>() {
                @Override
                public void onHalfClose() {
                    invoked.incrementAndGet();
                }
            };

    /** A server call that records how it was closed. */
    private static final class RecordingCall extends ServerCall<HeartbeatNodeRequest, HeartbeatNodeResponse> {
        final List<Status> closed = new ArrayList<>();

        @Override
        public void request(int numMessages) {}

        @Override
        public void sendHeaders(Metadata headers) {}

        @Override
        public void sendMessage(HeartbeatNodeResponse message) {}

        @Override
        public void close(Status status, Metadata trailers) {
            closed.add(status);
        }

        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        public MethodDescriptor<HeartbeatNodeRequest, HeartbeatNodeResponse> getMethodDescriptor() {
            return MetaServerGrpc.getHeartbeatNodeMethod();
        }
    }

    @Test
    void shouldSkipTheMethodOfACancelledCall() {
        RecordingCall call = new RecordingCall();
        ServerCall.Listener<HeartbeatNodeRequest> late = interceptor.interceptCall(call, new Metadata(), method);

        Context.CancellableContext cancelled = Context.current().withCancellation();
        cancelled.cancel(null);
        Context previous = cancelled.attach();
        try {
            late.onHalfClose();
        } finally {
            cancelled.detach(previous);
        }
        assertThat(invoked).hasValue(0);
        assertThat(count("pegaflow_metaserver_calls_skipped")).isEqualTo(1);
        assertThat(call.closed).as("gRPC already ended the cancelled call").isEmpty();
    }

    @Test
    void shouldShedACallThatWaitedTooLongAndServeOneThatDidNot() {
        RecordingCall shedCall = new RecordingCall();
        RecordingCall servedCall = new RecordingCall();
        ServerCall.Listener<HeartbeatNodeRequest> shed = interceptor.interceptCall(shedCall, new Metadata(), method);
        ServerCall.Listener<HeartbeatNodeRequest> served =
                interceptor.interceptCall(servedCall, new Metadata(), method);

        CallWorkers.runAsQueued(LIMIT_NANOS + TimeUnit.MILLISECONDS.toNanos(1), shed::onHalfClose);
        assertThat(invoked).hasValue(0);
        assertThat(shedCall.closed).singleElement().satisfies(status -> {
            assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(status.getDescription()).startsWith("metaserver overloaded");
        });
        assertThat(count("pegaflow_metaserver_calls_shed")).isEqualTo(1);

        CallWorkers.runAsQueued(LIMIT_NANOS, served::onHalfClose);
        assertThat(invoked).hasValue(1);
        assertThat(servedCall.closed).isEmpty();
        assertThat(count("pegaflow_metaserver_calls_shed")).isEqualTo(1);
        assertThat(count("pegaflow_metaserver_calls_skipped")).isZero();
    }

    /** The counter of the heartbeat method, the one these calls are. */
    private double count(String name) {
        return registry.get(name).tag("method", "heartbeat_node").counter().count();
    }
}
