package io.pegaflow.push.prefill;

import io.pegaflow.core.instance.LayerRegistration;
import io.pegaflow.kernel.agent.Agent;
import io.pegaflow.kernel.agent.CommandQueue;
import io.pegaflow.kernel.agent.IdleStrategy;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.plan.MergeRule;
import io.pegaflow.kernel.plan.RangePlan;
import io.pegaflow.push.layout.Handshake;
import io.pegaflow.transfer.TransferBatch;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The prefill server's push agent. Each duty cycle it takes new pushes and completions from its queue, then polls
 * every active push's layer-ready object and, for each layer that became ready, copies the layer's blocks from the
 * worker's device memory into pool staging (one {@link RangePlan}, queued on the engine's save lane of the device
 * without waiting) and, once the lane reports the copy done, submits one put batch of it to the decode server's
 * staging. When a layer's batch resolved (every lane it used flushed), the decode server is told with LayerArrived;
 * when every layer was acknowledged the worker's push-state object becomes 1.
 *
 * <p>Bounds: at most {@code window} layers are between "copy queued" and "acknowledged" over all pushes (the reference's
 * 64-transfer window); a ready layer waits in the worker's counter, not in a queue. Every push has a deadline; past it,
 * or on any failure, its push state becomes -1, the decode server is told (PushFailed, best effort), and its staging
 * is freed once no put or call of it is outstanding. Completions reach the queue only for work this agent has out,
 * so the queue, sized for the window plus the admitted requests, cannot overflow.
 */
final class PushAgent implements Agent {
    private static final Logger LOG = LoggerFactory.getLogger(PushAgent.class);
    private static final int DRAIN_LIMIT = 256;

    private final CommandQueue<PushCommand> queue;
    private final TransferEngine transfer;
    private final DecodeLink link;
    private final NanoClock clock;
    private final int window;
    private final long chunkBytes;
    private final Callbacks callbacks;
    private final List<Push> active = new ArrayList<>();
    private final SwitchingIdle idle;
    private int outstandingLayers;

    /** What the prefill side counts. */
    interface Callbacks {
        void pushed(long bytes);

        void layerLag(long nanos);

        void completed(Push p);

        void failed(Push p, String reason);
    }

    PushAgent(
            CommandQueue<PushCommand> queue,
            TransferEngine transfer,
            DecodeLink link,
            NanoClock clock,
            int window,
            long chunkBytes,
            Callbacks callbacks) {
        this.queue = queue;
        this.transfer = transfer;
        this.link = link;
        this.clock = clock;
        this.window = window;
        this.chunkBytes = chunkBytes;
        this.callbacks = callbacks;
        this.idle = new SwitchingIdle(queue.idleStrategy(POLL_NANOS), queue.idleStrategy(IDLE_NANOS));
    }

    /** How often an active push's layer-ready object is read at most while nothing else happens. */
    static final long POLL_NANOS = 20_000;
    /** How long the agent waits for a command when no push is active. */
    static final long IDLE_NANOS = 1_000_000;

    IdleStrategy idleStrategy() {
        return idle;
    }

    @Override
    public String roleName() {
        return "pega-pd-push";
    }

    int activeCount() {
        return active.size();
    }

    @Override
    public int doWork() {
        int work = queue.drain(this::handle, DRAIN_LIMIT);
        long now = clock.nanoTime();
        for (int i = 0; i < active.size(); i++) {
            work += step(active.get(i), now);
        }
        work += reap();
        idle.polling = !active.isEmpty();
        return work;
    }

    private int step(Push p, long now) {
        if (p.failure != null) {
            return 0;
        }
        if (now - p.deadlineNanos >= 0) {
            fail(p, "timed out after " + p.deliveredLayers + " of " + p.layers() + " layers (pega.pd.push-timeout)");
            return 1;
        }
        int ready;
        try {
            ready = p.ready.poll();
        } catch (RuntimeException e) {
            fail(p, String.valueOf(e.getMessage()));
            return 1;
        }
        if (ready < 0) {
            fail(p, "the prefill worker aborted the push");
            return 1;
        }
        for (int l = 0; l < ready; l++) {
            if (p.readySeenNanos[l] == 0) {
                p.readySeenNanos[l] = now;
            }
        }
        int work = 0;
        while (p.copiedLayers < ready && outstandingLayers < window && p.failure == null) {
            submitLayer(p, p.copiedLayers);
            work++;
        }
        return work;
    }

    /**
     * Queues the layer's copy (device to staging) on the device's save lane and returns: the lane reports back with
     * {@link PushCommand.CopyDone}, whose handler submits the puts. Not waiting here lets the next ready layer's copy
     * queue behind this one, so the lane copies layer after layer with no gap while this agent polls, submits puts and
     * handles completions; waiting for each copy cost every layer two thread hand-offs in series (docs/pd-push.md).
     */
    // the future's outcome is handled by the completion it queues, not by its return value
    @SuppressWarnings("FutureReturnValueIgnored")
    private void submitLayer(Push p, int layer) {
        LayerRegistration reg = p.rank.layers().get(layer);
        int segments = p.layout.segments(layer);
        long bytes = p.layout.segmentBytes(layer);
        long base = p.staging.address();
        CompletableFuture<Void> copied;
        try {
            RangePlan copy = new RangePlan(p.blockIds.length * segments);
            for (int pos = 0; pos < p.blockIds.length; pos++) {
                for (int s = 0; s < segments; s++) {
                    copy.add(reg.deviceRange(p.blockIds[pos], s), base + p.layout.offset(layer, pos, s), bytes);
                }
            }
            copied = p.rank.copyToStaging(copy, p.staging);
        } catch (RuntimeException e) {
            fail(p, "copying layer " + layer + " to the pool failed: " + e.getMessage());
            return;
        }
        p.copiedLayers++;
        p.inFlightCopies++;
        outstandingLayers++;
        copied.whenComplete((ignored, error) -> offerCompletion(new PushCommand.CopyDone(p, layer, error)));
    }

    /** A layer is in staging: one put batch of it to the decode server's staging. */
    // the future's outcome is handled by the completion it queues, not by its return value
    @SuppressWarnings("FutureReturnValueIgnored")
    private void copyDone(PushCommand.CopyDone d) {
        Push p = d.push();
        int layer = d.layer();
        p.inFlightCopies--;
        Throwable copyError = d.error();
        if (copyError != null) {
            outstandingLayers--;
            fail(p, "copying layer " + layer + " to the pool failed: " + copyError.getMessage());
            return;
        }
        if (p.failure != null) {
            outstandingLayers--;
            return;
        }
        long now = clock.nanoTime();
        TransferBatch batch;
        try {
            Handshake.LayerTarget target = p.target.layers().get(layer);
            long local = p.staging.address() + p.layout.layerOffset(layer);
            long total = p.layout.layerBytes(layer);
            batch = TransferBatch.put((int) Math.min(1024, total / chunkBytes + 1), MergeRule.NEVER);
            for (long off = 0; off < total; off += chunkBytes) {
                batch.add(local + off, target.baseAddress() + off, Math.min(chunkBytes, total - off));
            }
        } catch (RuntimeException e) {
            outstandingLayers--;
            fail(p, "preparing the puts of layer " + layer + " failed: " + e.getMessage());
            return;
        }
        CompletableFuture<TransferResult> f;
        try {
            f = transfer.submit(p.peer, batch, Math.max(1, p.deadlineNanos - now));
        } catch (RuntimeException e) {
            outstandingLayers--;
            fail(p, "submitting layer " + layer + " failed: " + e.getMessage());
            return;
        }
        p.inFlightPuts++;
        f.whenComplete((result, error) -> offerCompletion(new PushCommand.PutDone(p, layer, result, error)));
    }

    private void offerCompletion(PushCommand c) {
        // cannot be FULL (see the class comment); CLOSED means the agent is stopping and onClose frees the push
        if (queue.offer(c) == CommandQueue.Offer.FULL) {
            LOG.error("push agent queue full on a completion; the push will time out");
        }
    }

    private void handle(PushCommand c) {
        if (c instanceof PushCommand.Start s) {
            Push p = s.push();
            active.add(p);
            watch(p);
        } else if (c instanceof PushCommand.LinkBroken b) {
            fail(b.push(), b.reason()); // a push that already finished ignores it
        } else if (c instanceof PushCommand.CopyDone d) {
            copyDone(d);
        } else if (c instanceof PushCommand.PutDone d) {
            putDone(d);
        } else if (c instanceof PushCommand.Delivered d) {
            delivered(d);
        }
    }

    private void watch(Push p) {
        try {
            p.watch = link.watch(
                    p.peer.address(),
                    p.receive,
                    p.rank.tpRank(),
                    Math.max(1, p.deadlineNanos - clock.nanoTime()) + WATCH_GRACE_NANOS,
                    reason -> offerCompletion(new PushCommand.LinkBroken(p, reason)));
        } catch (RuntimeException e) {
            // without a watch the push still ends: its puts, LayerArrived calls and deadline see the decode side
            LOG.warn("push {} ({}): WatchReceive could not be opened: {}", p.id, p.requestId, e.getMessage());
        }
    }

    /** How long a watch outlives its push's deadline, so the decode side's answer to a timed-out push is still heard. */
    static final long WATCH_GRACE_NANOS = 5_000_000_000L;

    private void putDone(PushCommand.PutDone d) {
        Push p = d.push();
        p.inFlightPuts--;
        Throwable putError = d.error();
        if (putError != null) {
            outstandingLayers--;
            fail(p, "the puts of layer " + d.layer() + " failed: " + putError.getMessage());
            return;
        }
        TransferResult result = Objects.requireNonNull(d.result(), "a put batch that did not fail has a result");
        if (!result.isComplete()) {
            outstandingLayers--;
            fail(
                    p,
                    "the puts of layer " + d.layer() + " failed: "
                            + Objects.requireNonNull(result.failure(), "an incomplete batch has a failure")
                                    .getMessage());
            return;
        }
        callbacks.pushed(result.bytesTransferred());
        if (p.failure != null) {
            outstandingLayers--;
            return;
        }
        p.inFlightRpcs++;
        link.layerArrived(
                p.peer.address(),
                p.receive,
                p.rank.tpRank(),
                d.layer(),
                error -> offerCompletion(new PushCommand.Delivered(p, d.layer(), error)));
    }

    @SuppressWarnings("NonAtomicVolatileUpdate") // one writer (this agent); the volatile only publishes to the view
    private void delivered(PushCommand.Delivered d) {
        Push p = d.push();
        p.inFlightRpcs--;
        outstandingLayers--;
        if (d.error() != null) {
            fail(
                    p,
                    "the decode server did not take layer " + d.layer() + ": "
                            + d.error().getMessage());
            return;
        }
        if (p.failure != null) {
            return;
        }
        p.deliveredLayers++;
        callbacks.layerLag(clock.nanoTime() - p.readySeenNanos[d.layer()]);
        if (p.deliveredLayers == p.layers()) {
            p.finished = true;
            callbacks.completed(p);
            if (!p.state.succeed()) {
                LOG.info("push {} ({}): the push_state object is gone; the worker gave up", p.id, p.requestId);
            }
        }
    }

    private void fail(Push p, String reason) {
        if (p.failure != null || p.finished) {
            return;
        }
        p.failure = reason;
        // counted before the verdict is visible, so whoever sees -1 also sees the failure counted
        callbacks.failed(p, reason);
        p.state.fail();
        LOG.warn("push {} ({}, rank {}) to {} failed: {}", p.id, p.requestId, p.rank.tpRank(), p.peer, reason);
        link.pushFailed(p.peer.address(), p.receive, p.rank.tpRank(), reason);
    }

    /** Frees pushes that ended and have nothing outstanding. */
    private int reap() {
        int n = 0;
        for (int i = active.size() - 1; i >= 0; i--) {
            Push p = active.get(i);
            if ((p.finished || p.failure != null) && p.quiescent()) {
                active.remove(i);
                release(p);
                n++;
            }
        }
        return n;
    }

    private static void release(Push p) {
        if (p.finished) {
            // a failed push leaves its watch to the decode side, which ends it on the PushFailed it is being sent;
            // cancelling it now could overtake that call and fail the receive with a vaguer reason
            closeWatch(p);
        }
        p.staging.release();
        p.ready.close();
        p.rank.release();
    }

    private static void closeWatch(Push p) {
        try {
            p.watch.close();
        } catch (Exception e) {
            // cancelling a call does not fail; nothing is held by a watch but the call
        }
    }

    /**
     * The engine closed the transfer engine first, so every put has resolved; pushes still open fail here and free
     * their staging. A completion that raced with the close is in the returned commands and is simply dropped.
     */
    @Override
    public void onClose() {
        for (PushCommand c : queue.close()) {
            if (c instanceof PushCommand.Start s) {
                active.add(s.push());
            }
        }
        for (Push p : active) {
            fail(p, "the prefill server is shutting down");
            release(p);
        }
        active.clear();
    }

    /** Short waits while a push is active (its layer-ready object must be read), long ones otherwise. */
    static final class SwitchingIdle implements IdleStrategy {
        private final IdleStrategy polling0;
        private final IdleStrategy waiting;
        volatile boolean polling;

        SwitchingIdle(IdleStrategy polling, IdleStrategy waiting) {
            this.polling0 = polling;
            this.waiting = waiting;
        }

        @Override
        public void idle(int workCount) {
            (polling ? polling0 : waiting).idle(workCount);
        }

        @Override
        public void wake() {
            polling0.wake();
            waiting.wake();
        }
    }
}
