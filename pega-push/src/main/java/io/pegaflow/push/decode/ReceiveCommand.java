package io.pegaflow.push.decode;

/** What RPC threads ask the receive agent to do. */
sealed interface ReceiveCommand {
    /** Every put of this layer and rank was flushed by the prefill server: copy it to the device. */
    record Arrived(long receiveId, int tpRank, int layer) implements ReceiveCommand {}

    /** The prefill side gave up, or the decode worker cancelled. */
    record Fail(long receiveId, String reason) implements ReceiveCommand {}

    /** The prefill server's WatchReceive stream for a rank broke: fails the receive unless that rank is done. */
    record LinkLost(long receiveId, int tpRank) implements ReceiveCommand {}
}
