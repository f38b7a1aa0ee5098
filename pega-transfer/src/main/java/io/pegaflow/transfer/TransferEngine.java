package io.pegaflow.transfer;

import java.util.concurrent.CompletableFuture;

/**
 * One-sided transfers between this node's registered memory and its peers'. It knows neither blocks nor leases: it
 * moves byte ranges between addresses both sides registered when the engine was built.
 *
 * <p><b>Connections.</b> Every peer gets {@link #lanes()} connections, connection {@code i} on this node's worker
 * {@code i}, each worker driven by its own progress thread. A peer becomes usable by {@link #connect} with its
 * {@link HandshakeDescriptor}; both nodes connect to each other with each other's descriptors (the {@code RdmaHandshake}
 * exchange). A connection that fails (a peer error or a deadline) is dropped on every lane at once; the peer is then
 * {@link TransferException.Kind#NOT_CONNECTED} until the next handshake.
 *
 * <p><b>Batches.</b> {@link #submit} spreads a batch over all lanes one operation at a time, starting at a lane that
 * rotates from batch to batch, so one large batch uses every connection and a stream of small ones still does. A peer's
 * failure fails only the operations on that peer's connections.
 *
 * <p><b>Memory safety.</b> A batch's future completes only when no operation of it can still touch memory: every lane
 * either completed its operations or closed its endpoint. Until then the caller must keep both the local and the
 * remote ranges alive (the remote side by a transfer lock). The future completes on a shared pool thread, never on a
 * progress thread.
 *
 * <p>Thread-safe. {@link #close()} drops every connection, waits for in-flight operations to end, and then releases
 * UCX resources in the only order UCX survives (endpoints and remote keys, workers, registered memory, context). The
 * registered memory must outlive the engine.
 */
public interface TransferEngine extends AutoCloseable {

    /** This node's descriptor, to send to peers. The same bytes for the engine's whole life. */
    HandshakeDescriptor localDescriptor();

    /** Connections per peer. */
    int lanes();

    /**
     * Connects to a peer, replacing any connection to it (a restarted peer): the old connection's in-flight operations
     * fail. The future completes once every lane's endpoint has made a round trip to the peer (so the peer is reachable
     * and UCX's wire-up is done), or exceptionally with the first lane's failure; {@link TransferException.Kind#TIMEOUT}
     * when a lane has no answer within {@code timeoutNanos}.
     *
     * @throws TransferException {@link TransferException.Kind#INCOMPATIBLE_PEER} when {@code remote} disagrees with
     *     this node's descriptor, {@link TransferException.Kind#CLOSED} after close
     */
    CompletableFuture<Void> connect(PeerId peer, HandshakeDescriptor remote, long timeoutNanos);

    /** Whether an established connection to the peer exists. */
    boolean isConnected(PeerId peer);

    /**
     * Drops the connection to a peer; in-flight operations to it fail. The future completes when every lane has closed
     * its endpoint. Completes at once when there is no connection.
     */
    CompletableFuture<Void> disconnect(PeerId peer);

    /**
     * Submits a batch to a connected peer.
     *
     * @param timeoutNanos how long the batch may take; past it the connection is dropped and the batch's unfinished
     *     operations fail with {@link TransferException.Kind#TIMEOUT}
     * @return completes with the per-operation outcome (never exceptionally), see {@link TransferResult}
     * @throws TransferException {@link TransferException.Kind#INVALID_ARGUMENT} when an operation's local range is not
     *     inside a registered region or its remote range not inside one of the peer's;
     *     {@link TransferException.Kind#NOT_CONNECTED}; {@link TransferException.Kind#CLOSED}. Nothing is submitted
     *     then.
     */
    CompletableFuture<TransferResult> submit(PeerId peer, TransferBatch batch, long timeoutNanos);

    /** A snapshot for metrics and the dashboard. */
    TransferView view();

    /** Idempotent; see the class comment for the order. */
    @Override
    void close();
}
