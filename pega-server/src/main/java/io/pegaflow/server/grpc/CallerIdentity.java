package io.pegaflow.server.grpc;

import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerTransportFilter;
import io.pegaflow.core.instance.Principal;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.edge.rpc.EdgeStage;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.OptionalInt;
import org.jspecify.annotations.Nullable;

/**
 * Who is at the other end of a gRPC connection: its uid ({@link PeerUid}) and the {@link Principal} that owns the
 * instances it registers. Worked out once per connection, when its transport is ready ({@link #transportFilter()}),
 * because the peer's socket, and so its uid, cannot change while the connection lives; a cache by address would
 * outlive the connection and hand a reused port's uid to the next process. Each call then finds it in the gRPC
 * {@link Context} ({@link #current()}).
 *
 * @param uid the peer's uid when this host can tell, for opening its memory ({@link io.pegaflow.core.device.Caller})
 * @param principal the owner identity of what the peer registers
 */
record CallerIdentity(OptionalInt uid, Principal principal) {

    private static final Attributes.Key<CallerIdentity> TRANSPORT_KEY = Attributes.Key.create("pega-caller-identity");
    private static final Context.Key<CallerIdentity> CONTEXT_KEY = Context.key("pega-caller-identity");

    /** The identity of a transport peer; null when the transport does not name one. */
    static CallerIdentity of(@Nullable SocketAddress peer) {
        OptionalInt uid = PeerUid.of(peer);
        String host = peer instanceof InetSocketAddress inet && inet.getAddress() != null
                ? inet.getAddress().getHostAddress()
                : "unknown";
        return new CallerIdentity(uid, Principal.of(uid, host));
    }

    /** The identity of the peer of the gRPC call being served on this thread. */
    static CallerIdentity current() {
        CallerIdentity identity = CONTEXT_KEY.get();
        if (identity == null) {
            throw new IllegalStateException("no caller identity: CallerIdentity.interceptor() is not installed");
        }
        return identity;
    }

    /** Records every new connection's identity in its transport attributes. */
    static ServerTransportFilter transportFilter() {
        return new ServerTransportFilter() {
            @Override
            public Attributes transportReady(Attributes transport) {
                return transport.toBuilder()
                        .set(TRANSPORT_KEY, of(transport.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR)))
                        .build();
            }
        };
    }

    /** Puts the connection's identity into each call's context (working it out for a transport the filter missed). */
    static EdgeInterceptor interceptor() {
        return new EdgeInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(
                    ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                Attributes attributes = call.getAttributes();
                CallerIdentity identity = attributes.get(TRANSPORT_KEY);
                if (identity == null) {
                    identity = of(attributes.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
                }
                return Contexts.interceptCall(Context.current().withValue(CONTEXT_KEY, identity), call, headers, next);
            }

            @Override
            public EdgeStage stage() {
                return EdgeStage.REQUEST;
            }
        };
    }
}
