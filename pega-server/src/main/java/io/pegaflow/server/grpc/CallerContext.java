package io.pegaflow.server.grpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import org.springframework.grpc.server.GlobalServerInterceptor;
import org.springframework.stereotype.Component;

/**
 * Puts the caller's address and bearer token into the gRPC {@link Context}, so the Shutdown RPC can require a token
 * from callers that are not on loopback (the reference accepted Shutdown from anyone).
 */
@Component
@GlobalServerInterceptor
public class CallerContext implements ServerInterceptor {
    private static final String SESSION_METHOD = "pegaflow.Engine/Session";
    static final Context.Key<Boolean> LOOPBACK = Context.key("pega-caller-loopback");
    static final Context.Key<String> TOKEN = Context.key("pega-caller-token");
    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        String auth = headers.get(AUTHORIZATION);
        String token = auth != null && auth.startsWith("Bearer ") ? auth.substring(7) : "";
        Context ctx = Context.current().withValue(LOOPBACK, isLoopback(remote)).withValue(TOKEN, token);
        ServerCall.Listener<Q> listener = Contexts.interceptCall(ctx, call, headers, next);
        if (!SESSION_METHOD.equals(call.getMethodDescriptor().getFullMethodName())) {
            return listener;
        }
        // The Session stream never sends a message, so grpc-java would never send headers either. Sending them right
        // after the handler installed the session tells the client the session is live (tonic does the same).
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onHalfClose() {
                super.onHalfClose();
                try {
                    call.sendHeaders(new Metadata());
                } catch (IllegalStateException alreadyClosed) {
                    // The handler failed the call (empty instance_id): headers went with the status.
                }
            }
        };
    }

    static boolean isLoopback(SocketAddress remote) {
        if (remote instanceof InetSocketAddress inet) {
            InetAddress a = inet.getAddress();
            return a != null && a.isLoopbackAddress();
        }
        // In-process and Unix-domain transports are local by construction.
        return remote != null;
    }
}
