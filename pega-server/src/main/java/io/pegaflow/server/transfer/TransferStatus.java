package io.pegaflow.server.transfer;

import io.pegaflow.core.lease.TransferLockTable;
import io.pegaflow.node.remote.RemoteFetchStats;
import io.pegaflow.transfer.TransferView;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * {@code GET /transfer}: the transfer engine's {@link TransferView} (fabric, NICs, lanes, every peer with its
 * connections, counters and latency), the owner's lock table, and the requester's remote fetches (null without a
 * metaserver). Read-only; the dashboard's Transfer page reads it.
 */
public record TransferStatus(
        TransferView engine,
        TransferLockTable.Stats locks,
        @Nullable Fetches fetches) {

    /** What the remote tier did; see {@link RemoteFetchStats}. */
    public record Fetches(
            long attempts, long succeeded, long blocks, long bytes, long running, Map<String, Long> failures) {
        static Fetches of(RemoteFetchStats s) {
            return new Fetches(
                    s.attempts(), s.succeeded(), s.blocksFetched(), s.bytesFetched(), s.running(), s.failures());
        }
    }
}
