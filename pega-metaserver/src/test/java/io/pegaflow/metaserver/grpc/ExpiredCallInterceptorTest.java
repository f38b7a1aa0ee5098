package io.pegaflow.metaserver.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A call cancelled while it waited for a worker never reaches its service method; a live one does. */
class ExpiredCallInterceptorTest {

    private final AtomicInteger invoked = new AtomicInteger();
    private final ServerCallHandler<String, String> method = (call, headers) -> new ServerCall.Listener<>() {
        @Override
        public void onHalfClose() {
            invoked.incrementAndGet();
        }
    };

    @Test
    void shouldSkipTheMethodOfACancelledCallOnly() {
        ExpiredCallInterceptor interceptor = new ExpiredCallInterceptor();
        // the interceptor reads only the context, never the call
        ServerCall.Listener<String> live = interceptor.interceptCall(null, new Metadata(), method);
        ServerCall.Listener<String> late = interceptor.interceptCall(null, new Metadata(), method);

        Context.CancellableContext cancelled = Context.current().withCancellation();
        cancelled.cancel(null);
        Context previous = cancelled.attach();
        try {
            late.onHalfClose();
        } finally {
            cancelled.detach(previous);
        }
        assertThat(invoked).hasValue(0);
        assertThat(interceptor.skipped()).isEqualTo(1);

        live.onHalfClose();
        assertThat(invoked).hasValue(1);
        assertThat(interceptor.skipped()).isEqualTo(1);
    }
}
