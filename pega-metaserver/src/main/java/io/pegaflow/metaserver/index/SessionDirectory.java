package io.pegaflow.metaserver.index;

import io.pegaflow.metaserver.node.NodeSession;
import org.jspecify.annotations.Nullable;

/**
 * Where a shared index looks up the current session of an address: records in Redis name their writer by address and
 * node_id, not by a session object of this process. In the application it is the node registry; tests of the index
 * alone pass a map.
 */
public interface SessionDirectory {

    /** The address's current session as this instance knows it, or null. */
    @Nullable
    NodeSession current(String url);

    /** Re-reads sessions that other instances may have changed (the registry reads the database). */
    default void refresh() {}
}
