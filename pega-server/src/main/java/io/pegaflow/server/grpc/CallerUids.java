package io.pegaflow.server.grpc;

import io.pegaflow.edge.access.AdminCallerInterceptor;
import java.util.OptionalInt;

/** The uid of the process calling the current RPC, where Linux can tell ({@link PeerUid}); for other services' use. */
public final class CallerUids {
    private CallerUids() {}

    public static OptionalInt current() {
        return PeerUid.of(AdminCallerInterceptor.currentPeer());
    }
}
