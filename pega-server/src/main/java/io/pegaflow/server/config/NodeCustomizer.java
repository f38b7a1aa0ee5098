package io.pegaflow.server.config;

import io.pegaflow.node.NodeContext;

/**
 * A feature's part of the node (P2P transfers, the remote tier, the P/D push): it sets its fields of the
 * {@link NodeContext} from its properties before the node is launched. A customizer only sets values; it may throw
 * {@link IllegalArgumentException} naming the key it refuses.
 */
@FunctionalInterface
public interface NodeCustomizer {
    void customize(NodeContext node);
}
