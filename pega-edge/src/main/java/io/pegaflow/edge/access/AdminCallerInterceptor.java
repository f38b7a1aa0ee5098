package io.pegaflow.edge.access;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.edge.rpc.EdgeStage;
import java.net.SocketAddress;
import org.jspecify.annotations.Nullable;

/**
 * Puts the call's transport peer and its {@code authorization} metadata into the gRPC {@link Context}, where
 * {@link AdminAccess#permitsCurrentGrpcCall()} reads them. The peer is the transport's remote address; gRPC has no
 * forwarding headers, and none would be read.
 */
public final class AdminCallerInterceptor implements EdgeInterceptor {

    static final Context.Key<SocketAddress> PEER = Context.key("pega-caller-peer");
    static final Context.Key<String> AUTHORIZATION = Context.key("pega-caller-authorization");
    static final Context.Key<Boolean> LOOPBACK_LISTENER = Context.key("pega-caller-loopback-listener");
    private static final Metadata.Key<String> AUTHORIZATION_KEY =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    private final boolean loopbackListener;

    /** @param loopbackListener whether the gRPC server is bound to a loopback address only */
    public AdminCallerInterceptor(boolean loopbackListener) {
        this.loopbackListener = loopbackListener;
    }

    /** The transport peer of the gRPC call being served on this thread, or {@code null} outside a call. */
    public static @Nullable SocketAddress currentPeer() {
        return PEER.get();
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        Context caller = Context.current()
                .withValue(PEER, call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR))
                .withValue(AUTHORIZATION, headers.get(AUTHORIZATION_KEY))
                .withValue(LOOPBACK_LISTENER, loopbackListener);
        return Contexts.interceptCall(caller, call, headers, next);
    }

    @Override
    public EdgeStage stage() {
        return EdgeStage.REQUEST;
    }
}
