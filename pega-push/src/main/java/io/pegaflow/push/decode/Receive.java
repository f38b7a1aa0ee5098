package io.pegaflow.push.decode;

import io.pegaflow.core.instance.Principal;
import io.pegaflow.core.load.LoadStateSignal;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.push.layout.RankLayers;
import io.pegaflow.push.layout.ReceiveKey;
import io.pegaflow.push.layout.StagingLayout;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * One prepared receive on the decode server: for every TP rank its registered layers, its pool staging, its
 * load_state object, and which layers have arrived and been copied to the device.
 *
 * <p>Ownership: the fields given to the constructor are published to the receive agent through the receive table (a
 * concurrent map); from then on only that agent touches the mutable state and releases the staging and the layer
 * retains, exactly once, in {@link ReceiveAgent}. RPC threads read only the final fields.
 */
final class Receive {
    final long id;
    /** The capability of the server-to-server RPCs; only the handshake carries its secret. */
    final ReceiveKey key;
    /** Who prepared it: only this principal may cancel it. */
    final Principal owner;
    /** What views show instead of the id: a per-server sequence number. */
    final long seq;

    final String requestId;
    final String instanceId;
    final long[] blockIds;
    final List<RankLayers> ranks;
    final List<StagingLayout> layouts;
    final List<PinnedAllocation> staging;
    final List<LoadStateSignal> signals;
    final long deadlineNanos;
    final long preparedNanos;
    /** The prefill servers' WatchReceive streams; added by RPC threads, ended by the receive agent. */
    final ConcurrentLinkedQueue<ReceiveWatcher> watchers = new ConcurrentLinkedQueue<>();

    // receive agent only
    final long[] layerOnDeviceNanos; // per layer, the latest rank's copy-to-device time
    final BitSet[] copied; // per rank, the layers whose copy was queued
    final int[] landed; // per rank, the layers on the device
    final boolean[] rankDone;
    int ranksDone;
    volatile int layersCopied; // read by the admin view

    Receive(
            ReceiveKey key,
            Principal owner,
            long seq,
            String requestId,
            String instanceId,
            long[] blockIds,
            List<RankLayers> ranks,
            List<StagingLayout> layouts,
            List<PinnedAllocation> staging,
            List<LoadStateSignal> signals,
            long preparedNanos,
            long deadlineNanos) {
        this.id = key.id();
        this.key = key;
        this.owner = owner;
        this.seq = seq;
        this.requestId = requestId;
        this.instanceId = instanceId;
        this.blockIds = blockIds;
        this.ranks = ranks;
        this.layouts = layouts;
        this.staging = staging;
        this.signals = signals;
        this.preparedNanos = preparedNanos;
        this.deadlineNanos = deadlineNanos;
        this.layerOnDeviceNanos = new long[layouts.get(0).layers()];
        this.copied = new BitSet[ranks.size()];
        for (int r = 0; r < copied.length; r++) {
            copied[r] = new BitSet();
        }
        this.landed = new int[ranks.size()];
        this.rankDone = new boolean[ranks.size()];
    }

    int tpSize() {
        return ranks.size();
    }

    int layers() {
        return layouts.get(0).layers();
    }

    long stagingBytes() {
        long n = 0;
        for (PinnedAllocation a : staging) {
            n += a.sizeBytes();
        }
        return n;
    }
}
