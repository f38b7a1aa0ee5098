package io.pegaflow.push;

import java.util.List;

/**
 * A read-only snapshot for the admin API and the dashboard.
 *
 * @param advertiseAddress this server's push address
 * @param registeredRanks (instance, rank) pairs with push layers
 * @param pushes prefill-side requests in flight
 * @param receives decode-side requests in flight
 * @param quarantinedBytes staging of failed receives still held (see {@code pega.pd.quarantine})
 */
public record PushView(
        String advertiseAddress,
        int registeredRanks,
        long pushesInFlight,
        long receivesInFlight,
        long pushesCompleted,
        long receivesCompleted,
        long bytesPushed,
        long bytesReceived,
        long pushFailures,
        long receiveFailures,
        long lastLayerLagNanos,
        long maxLayerLagNanos,
        long quarantinedBytes,
        List<Request> pushes,
        List<Request> receives) {

    /** One request in flight: id, the worker's request id, its rank, layers done of layers, seconds left. */
    public record Request(String id, String requestId, String instanceId, int tpRank, int layersDone, int layers) {}
}
