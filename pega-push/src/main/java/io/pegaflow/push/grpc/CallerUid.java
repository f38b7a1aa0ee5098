package io.pegaflow.push.grpc;

import java.util.OptionalInt;

/**
 * The operating-system user of the worker calling an RPC, where the transport can tell; the server's device backend
 * opens only memory that user owns (the confused-deputy check of RegisterContext). Called on the RPC's thread.
 */
@FunctionalInterface
public interface CallerUid {
    OptionalInt current();
}
