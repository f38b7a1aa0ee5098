package io.pegaflow.server.grpc;

import io.pegaflow.core.instance.Principal;
import io.pegaflow.edge.access.AdminCallerInterceptor;
import java.util.OptionalInt;

/**
 * The uid of the process calling the current RPC, where Linux can tell ({@link PeerUid}), and the principal that owns
 * what it registers; for other services' use.
 */
public final class CallerUids {
    private CallerUids() {}

    public static OptionalInt current() {
        return PeerUid.of(AdminCallerInterceptor.currentPeer());
    }

    /** The owner identity of the current call's peer, as the engine's RPCs see it ({@link CallerIdentity}). */
    public static Principal principal() {
        return CallerIdentity.current().principal();
    }
}
