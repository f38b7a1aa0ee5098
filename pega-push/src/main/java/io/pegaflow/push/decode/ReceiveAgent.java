package io.pegaflow.push.decode;

import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.LayerRegistration;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.kernel.agent.Agent;
import io.pegaflow.kernel.agent.CommandQueue;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.plan.RangePlan;
import io.pegaflow.push.layout.LaneWait;
import io.pegaflow.push.layout.RankLayers;
import io.pegaflow.push.layout.StagingLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The decode server's receive agent: copies each arrived layer from pool staging to the decode worker's device memory
 * (on the engine's load lane of the device), signals a rank's load_state once all its layers are there, and fails
 * receives past their deadline. Every receive
 * ends in exactly one verdict per rank (1 or -1), so a decode worker polling its load_state never waits forever while
 * this server lives; if this server dies, the worker's own deadline applies (the client libraries have one).
 *
 * <p>The layers that arrived together (one drain of the queue) have their copies queued on the lane one behind the
 * other and only then awaited, so the lane copies them back to back and a burst pays the hand-off to the lane and back
 * once rather than once per layer (docs/pd-push.md). Every queued copy is awaited before any other command is
 * handled and before a verdict of its receive is written: a worker that sees -1 may reuse its blocks at once, so no
 * copy of ours may still be writing them.
 *
 * <p>Staging of a failed receive is not freed at once: a prefill server that has not yet learnt of the failure may
 * still have puts in flight into it. It stays allocated for the quarantine period and is freed after.
 */
final class ReceiveAgent implements Agent {
    private static final Logger LOG = LoggerFactory.getLogger(ReceiveAgent.class);
    private static final int DRAIN_LIMIT = 64;
    private static final long DEADLINE_CHECK_NANOS = 1_000_000;

    private final CommandQueue<ReceiveCommand> queue;
    private final Map<Long, Receive> receives;
    private final NanoClock clock;
    private final long quarantineNanos;
    private final Callbacks callbacks;
    private final ArrayDeque<Quarantined> quarantine = new ArrayDeque<>();
    private long nextDeadlineCheck;

    private record Quarantined(Receive receive, long releaseAtNanos) {}

    /** A layer's copy queued on the load lane, awaited by {@link #settle()}. */
    private record Pending(Receive receive, int tpRank, int layer, long bytes, CompletableFuture<Void> copy) {}

    /** Copies queued and not yet awaited, oldest first; empty between duty cycles. */
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();

    /** What the engine counts. */
    interface Callbacks {
        void layerCopied(long bytes);

        void completed(Receive r, long nowNanos);

        void failed(Receive r, String reason, long nowNanos);

        LongConsumer quarantinedBytes();
    }

    ReceiveAgent(
            CommandQueue<ReceiveCommand> queue,
            Map<Long, Receive> receives,
            NanoClock clock,
            long quarantineNanos,
            Callbacks callbacks) {
        this.queue = queue;
        this.receives = receives;
        this.clock = clock;
        this.quarantineNanos = quarantineNanos;
        this.callbacks = callbacks;
    }

    @Override
    public String roleName() {
        return "pega-pd-receive";
    }

    @Override
    public int doWork() {
        int work = queue.drain(this::handle, DRAIN_LIMIT);
        settle();
        long now = clock.nanoTime();
        if (now - nextDeadlineCheck >= 0) {
            nextDeadlineCheck = now + DEADLINE_CHECK_NANOS;
            work += expire(now);
            work += releaseQuarantine(now);
        }
        return work;
    }

    private void handle(ReceiveCommand c) {
        if (c instanceof ReceiveCommand.Arrived a) {
            arrived(a);
            return;
        }
        settle(); // a verdict below must not overtake a copy still writing the worker's blocks
        if (c instanceof ReceiveCommand.Fail f) {
            Receive r = receives.get(f.receiveId());
            if (r != null) {
                fail(r, f.reason());
            }
        } else if (c instanceof ReceiveCommand.LinkLost l) {
            Receive r = receives.get(l.receiveId());
            // the queue is FIFO: a rank whose last LayerArrived came before its link closed is done by now
            if (r != null && !r.rankDone[l.tpRank()]) {
                fail(
                        r,
                        "the prefill server's link for rank " + l.tpRank() + " closed before its layers arrived"
                                + " (the prefill server stopped or died)");
            }
        }
    }

    /** Queues the layer's copy; {@link #settle()} awaits it and counts it in. */
    private void arrived(ReceiveCommand.Arrived a) {
        Receive r = receives.get(a.receiveId());
        if (r == null || r.rankDone[a.tpRank()] || r.copied[a.tpRank()].get(a.layer())) {
            return; // failed, finished or a duplicate: nothing to do
        }
        r.copied[a.tpRank()].set(a.layer()); // queued: a repeated LayerArrived for it is a duplicate from now on
        try {
            pending.add(copyLayer(r, a.tpRank(), a.layer()));
        } catch (RuntimeException e) {
            settle(); // the copies queued before this one land before the verdict
            copyFailed(r, a.tpRank(), a.layer(), String.valueOf(e.getMessage()));
        }
    }

    /**
     * Awaits the queued copies in order and counts each in as it lands, so a layer's time and a rank's verdict of 1 are
     * not held back by the copies behind it. A copy that failed or did not land in time fails its receive only once
     * every copy queued with it was awaited, so nothing of ours still writes the blocks of a worker that sees -1.
     */
    private void settle() {
        if (pending.isEmpty()) {
            return;
        }
        List<Pending> failed = new ArrayList<>(0);
        List<String> reasons = new ArrayList<>(0);
        for (Pending c = pending.poll(); c != null; c = pending.poll()) {
            String failure = await(c);
            boolean open = receives.get(c.receive().id) == c.receive() && !failedIn(failed, c.receive());
            if (failure != null && open) {
                failed.add(c);
                reasons.add(failure);
            } else if (failure == null && open) {
                landed(c);
            }
        }
        for (int i = 0; i < failed.size(); i++) {
            Pending c = failed.get(i);
            copyFailed(c.receive(), c.tpRank(), c.layer(), reasons.get(i));
        }
    }

    private static boolean failedIn(List<Pending> failed, Receive r) {
        for (Pending c : failed) {
            if (c.receive() == r) {
                return true;
            }
        }
        return false;
    }

    private @Nullable String await(Pending c) {
        try {
            String late = LaneWait.await(c.copy(), Math.max(0, c.receive().deadlineNanos - clock.nanoTime()));
            return late == null ? null : "the copy " + late;
        } catch (RuntimeException e) {
            return String.valueOf(e.getMessage());
        }
    }

    private void copyFailed(Receive r, int tpRank, int layer, String reason) {
        if (receives.get(r.id) != r) {
            return;
        }
        LOG.warn(
                "receive {} ({}): copying layer {} of rank {} to the device failed: {}",
                r.id,
                r.requestId,
                layer,
                tpRank,
                reason);
        fail(r, "copy to device failed: " + reason);
    }

    @SuppressWarnings("NonAtomicVolatileUpdate") // one writer (this agent); the volatile only publishes to the view
    private void landed(Pending c) {
        Receive r = c.receive();
        int rank = c.tpRank();
        callbacks.layerCopied(c.bytes());
        r.layerOnDeviceNanos[c.layer()] = clock.nanoTime();
        r.layersCopied++;
        r.landed[rank]++;
        if (r.landed[rank] == r.layers()) {
            r.rankDone[rank] = true;
            r.ranksDone++;
            if (!r.signals.get(rank).succeed()) {
                LOG.info(
                        "receive {} ({}): the load_state of rank {} is gone; the worker gave up",
                        r.id,
                        r.requestId,
                        rank);
            }
            if (r.ranksDone == r.tpSize()) {
                receives.remove(r.id);
                release(r);
                callbacks.completed(r, clock.nanoTime());
            }
        }
    }

    private Pending copyLayer(Receive r, int rank, int layer) {
        RankLayers layers = r.ranks.get(rank);
        StagingLayout layout = r.layouts.get(rank);
        LayerRegistration reg = layers.layers().get(layer);
        long base = r.staging.get(rank).address();
        int segments = layout.segments(layer);
        long bytes = layout.segmentBytes(layer);
        RangePlan plan = new RangePlan(r.blockIds.length * segments);
        for (int p = 0; p < r.blockIds.length; p++) {
            for (int s = 0; s < segments; s++) {
                plan.add(base + layout.offset(layer, p, s), reg.deviceRange(r.blockIds[p], s), bytes);
            }
        }
        return new Pending(r, rank, layer, plan.totalBytes(), layers.copyToDevice(plan, r.staging.get(rank)));
    }

    private int expire(long now) {
        int n = 0;
        for (Iterator<Receive> it = receives.values().iterator(); it.hasNext(); ) {
            Receive r = it.next();
            if (now - r.deadlineNanos >= 0) {
                fail(
                        r,
                        "timed out waiting for the prefill side (" + r.layersCopied + " of " + r.layers() * r.tpSize()
                                + " rank-layers arrived)");
                n++;
            }
        }
        return n;
    }

    private void fail(Receive r, String reason) {
        if (receives.remove(r.id) == null) {
            return;
        }
        // counted before the verdict is visible, so whoever sees -1 also sees the failure counted
        callbacks.failed(r, reason, clock.nanoTime());
        for (int rank = 0; rank < r.tpSize(); rank++) {
            if (!r.rankDone[rank]) {
                r.rankDone[rank] = true;
                r.signals.get(rank).fail();
            }
        }
        LOG.warn(
                "receive {} ({}, instance {}) failed: {}; the decode worker sees load_state -1 and recomputes",
                r.id,
                r.requestId,
                r.instanceId,
                reason);
        if (quarantineNanos == 0) {
            release(r);
        } else {
            quarantine.add(new Quarantined(r, clock.nanoTime() + quarantineNanos));
            callbacks.quarantinedBytes().accept(r.stagingBytes());
        }
    }

    private int releaseQuarantine(long now) {
        int n = 0;
        while (!quarantine.isEmpty() && now - quarantine.peekFirst().releaseAtNanos() >= 0) {
            Receive r = quarantine.pollFirst().receive();
            callbacks.quarantinedBytes().accept(-r.stagingBytes());
            release(r);
            n++;
        }
        return n;
    }

    private static void release(Receive r) {
        r.staging.forEach(PinnedAllocation::release);
        r.ranks.forEach(RankLayers::release);
    }

    /** Fails what is still open and frees everything, the quarantine included (the engine's transfers are closed). */
    @Override
    public void onClose() {
        settle();
        for (ReceiveCommand ignored : queue.close()) {
            // commands of receives failed below
        }
        for (Receive r : receives.values().toArray(new Receive[0])) {
            fail(r, "the decode server is shutting down");
        }
        while (!quarantine.isEmpty()) {
            Receive r = quarantine.pollFirst().receive();
            callbacks.quarantinedBytes().accept(-r.stagingBytes());
            release(r);
        }
    }

    static EngineException unknown(long id) {
        return EngineException.failedPrecondition("receive " + Long.toUnsignedString(id)
                + " is not open on this decode server (finished, failed, timed out or never prepared)");
    }
}
