package io.pegaflow.edge.rpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import org.jspecify.annotations.Nullable;

/**
 * Refuses every outbound call that carries no deadline, on the channel it is installed on (decision 0016). A blocking
 * stub without one waits forever for a peer that accepted the connection and never answers; the forbidden-apis
 * signatures cannot see a gRPC call's options, so this check does at run time what they do for JDK waits. The call
 * fails at once with {@code INTERNAL} naming the method, so a missing {@code withDeadlineAfter} shows in the first
 * test that makes the call instead of in a hung production thread.
 *
 * <p>A deadline inherited from the current {@link Context} (a call made while serving one) counts.
 */
public final class DeadlineRequiredInterceptor implements ClientInterceptor {
    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        @Nullable Deadline deadline = options.getDeadline();
        if (deadline == null) {
            deadline = Context.current().getDeadline();
        }
        if (deadline != null) {
            return next.newCall(method, options);
        }
        return new Refused<>(next.newCall(method, options), method.getFullMethodName());
    }

    /** Closes the call with INTERNAL before anything is sent. */
    private static final class Refused<Q, R> extends ForwardingClientCall.SimpleForwardingClientCall<Q, R> {
        private final String method;

        Refused(ClientCall<Q, R> delegate, String method) {
            super(delegate);
            this.method = method;
        }

        @Override
        public void start(Listener<R> listener, Metadata headers) {
            listener.onClose(
                    Status.INTERNAL.withDescription("outbound call " + method
                            + " has no deadline; every outbound call needs one (decision 0016)"),
                    new Metadata());
        }

        @Override
        public void request(int numMessages) {}

        @Override
        public void cancel(@Nullable String message, @Nullable Throwable cause) {}

        @Override
        public void halfClose() {}

        @Override
        public void sendMessage(Q message) {}
    }
}
