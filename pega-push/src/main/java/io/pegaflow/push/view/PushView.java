package io.pegaflow.push.view;

import java.util.List;

/**
 * A read-only snapshot for the admin API and the dashboard.
 *
 * @param advertiseAddress this server's push address
 * @param registeredRanks (instance, rank) pairs with push layers
 * @param pushes prefill-side requests in flight
 * @param receives decode-side requests in flight
 * @param quarantinedBytes staging of failed receives still held (see {@code pega.pd.quarantine})
 * @param clockNanos this server's clock when the view was taken ({@code System.nanoTime()}, CLOCK_MONOTONIC on
 *     Linux), so a client can place the timelines' times on its own monotonic clock
 * @param recentReceives the last receives that ended on this server, oldest first (at most {@link #RECENT})
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
        List<Request> receives,
        long clockNanos,
        List<ReceiveTimeline> recentReceives) {

    /** How many ended receives the view keeps. */
    public static final int RECENT = 32;

    /** One request in flight: id, the worker's request id, its rank, layers done of layers, seconds left. */
    public record Request(String id, String requestId, String instanceId, int tpRank, int layersDone, int layers) {}

    /**
     * One ended receive, for measuring how far the transfer overlapped the prefill forward pass (gpu-tests/pd_push.py).
     * Times are this server's clock ({@link PushView#clockNanos()}).
     *
     * @param layerOnDeviceNanos per layer, when it was on the decode device for every rank; 0 if it never was
     */
    public record ReceiveTimeline(
            String id,
            String requestId,
            String instanceId,
            boolean succeeded,
            long preparedNanos,
            long endedNanos,
            List<Long> layerOnDeviceNanos) {}
}
