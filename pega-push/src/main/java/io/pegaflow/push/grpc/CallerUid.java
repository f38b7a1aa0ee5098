package io.pegaflow.push.grpc;

import io.pegaflow.core.instance.Principal;
import java.util.OptionalInt;

/**
 * The operating-system user of the worker calling an RPC, where the transport can tell; the server's device backend
 * opens only memory that user owns (the confused-deputy check of RegisterContext). Called on the RPC's thread.
 */
@FunctionalInterface
public interface CallerUid {
    OptionalInt current();

    /**
     * Who owns what the caller registers (the cache engine's owner rule): its user, or where the transport cannot tell
     * one, its host. A server whose transport knows the peer's address overrides this.
     */
    default Principal principal() {
        return Principal.of(current(), "unknown");
    }
}
