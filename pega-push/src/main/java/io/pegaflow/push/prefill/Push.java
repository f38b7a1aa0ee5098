package io.pegaflow.push.prefill;

import io.pegaflow.core.instance.Principal;
import io.pegaflow.core.load.LoadStateSignal;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.push.layout.Handshake;
import io.pegaflow.push.layout.RankLayers;
import io.pegaflow.push.layout.ReceiveKey;
import io.pegaflow.push.layout.StagingLayout;
import io.pegaflow.push.signal.LayerReadySignal;
import io.pegaflow.transfer.PeerId;
import org.jspecify.annotations.Nullable;

/**
 * One rank's push of one request on the prefill server. Created by StartPush and handed to the {@link PushAgent}
 * through its queue; from then on only that agent touches the mutable state, and it releases the staging, the
 * layer-ready descriptor and the layer retain exactly once, after no put of the push can still read the staging.
 */
final class Push {
    final long id;
    final String requestId;
    /** Who started it; holds one of its request slots. */
    final Principal owner;

    final RankLayers rank;
    final long[] blockIds;
    final LayerReadySignal ready;
    final LoadStateSignal state;
    final PinnedAllocation staging;
    final StagingLayout layout;
    final PeerId peer;
    final ReceiveKey receive;
    final Handshake.RankTarget target;
    final long deadlineNanos;

    // push agent only
    int copiedLayers; // layers whose copy to staging was queued on the save lane
    int inFlightCopies; // copies queued, not yet reported back
    int inFlightPuts; // layer batches submitted, not yet resolved
    int inFlightRpcs; // LayerArrived calls not yet answered
    final long[] readySeenNanos;

    @Nullable
    String failure; // non-null once failed

    boolean finished;
    volatile int deliveredLayers; // read by the admin view
    AutoCloseable watch = () -> {}; // the WatchReceive stream, closed when the push succeeded

    Push(
            long id,
            String requestId,
            Principal owner,
            RankLayers rank,
            long[] blockIds,
            LayerReadySignal ready,
            LoadStateSignal state,
            PinnedAllocation staging,
            StagingLayout layout,
            PeerId peer,
            ReceiveKey receive,
            Handshake.RankTarget target,
            long deadlineNanos) {
        this.id = id;
        this.requestId = requestId;
        this.owner = owner;
        this.rank = rank;
        this.blockIds = blockIds;
        this.ready = ready;
        this.state = state;
        this.staging = staging;
        this.layout = layout;
        this.peer = peer;
        this.receive = receive;
        this.target = target;
        this.deadlineNanos = deadlineNanos;
        this.readySeenNanos = new long[layout.layers()];
    }

    int layers() {
        return layout.layers();
    }

    boolean quiescent() {
        return inFlightCopies == 0 && inFlightPuts == 0 && inFlightRpcs == 0;
    }
}
