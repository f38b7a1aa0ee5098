package io.pegaflow.bench.link;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.MethodDescriptor;

/**
 * When the client's last call finished handing its request to the transport: grpc-java serialises a unary request
 * into the transport's buffers on the calling thread and sends the call's headers only with it, so the time from the
 * call until its {@code halfClose} returned is the client's own share of sending (serialising and framing), apart from
 * the server's. One caller thread at a time, as in {@link LinkBench}.
 */
final class SendClock implements ClientInterceptor {
    private volatile long sentNanos;

    /** {@link System#nanoTime()} when the last call's request was handed over, 0 before any. */
    long sentNanos() {
        return sentNanos;
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void halfClose() {
                super.halfClose();
                sentNanos = System.nanoTime();
            }
        };
    }
}
