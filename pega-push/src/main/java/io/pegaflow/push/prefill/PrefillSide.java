package io.pegaflow.push.prefill;

import io.pegaflow.core.engine.StagingAllocator;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.InstanceLimits;
import io.pegaflow.core.instance.Principal;
import io.pegaflow.core.load.LoadStateSignal;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.CommandQueue;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.push.layout.Deadlines;
import io.pegaflow.push.layout.HandshakeCodec;
import io.pegaflow.push.layout.HandshakeSeal;
import io.pegaflow.push.layout.Handshakes;
import io.pegaflow.push.layout.PushLayerTable;
import io.pegaflow.push.layout.RankLayers;
import io.pegaflow.push.layout.StagingLayout;
import io.pegaflow.push.signal.LayerReadySignal;
import io.pegaflow.push.signal.ShmObjects;
import io.pegaflow.push.view.PushView;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The prefill half of the push engine: StartPush checks the handshake against this rank's layers, connects the
 * transfer engine to the decode server (once per decode server incarnation), reserves pool staging through the cache
 * engine's {@link StagingAllocator} (evicting unreferenced cached blocks when the pool is full, as a Save does), and
 * hands the push to the {@link PushAgent}. Thread-safe.
 */
public final class PrefillSide implements AutoCloseable {
    private final PushLayerTable layers;
    private final HandshakeSeal seal;
    private final HandshakeCodec handshakes;
    private final StagingAllocator staging;
    private final TransferEngine transfer;
    private final NanoClock clock;
    private final long defaultTimeoutNanos;
    private final long connectTimeoutNanos;
    private final CommandQueue<PushCommand> queue;
    private final PushAgent agent;
    private final AgentRunner runner;
    private final AgentGroup agents;
    private final Map<PeerId, byte[]> connected = new ConcurrentHashMap<>();
    private final Map<Long, Push> open = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final Admission admission;

    /** The engine-wide bound on open requests and each principal's share of it, and the counters. */
    public interface Admission {
        /**
         * Takes a request slot for {@code who}.
         *
         * @throws EngineException RESOURCE_EXHAUSTED naming the bound that refused it
         */
        void admit(Principal who);

        void leave(Principal who);

        void pushed(long bytes);

        void layerLag(long nanos);

        void completed();

        void failed();
    }

    public PrefillSide(
            PushLayerTable layers,
            HandshakeSeal seal,
            HandshakeCodec handshakes,
            StagingAllocator staging,
            TransferEngine transfer,
            DecodeLink link,
            NanoClock clock,
            long defaultTimeoutNanos,
            long connectTimeoutNanos,
            int window,
            long chunkBytes,
            int maxRequests,
            AgentGroup agents,
            Admission admission) {
        this.layers = layers;
        this.seal = seal;
        this.handshakes = handshakes;
        this.staging = staging;
        this.transfer = transfer;
        this.clock = clock;
        this.defaultTimeoutNanos = defaultTimeoutNanos;
        this.connectTimeoutNanos = connectTimeoutNanos;
        this.admission = admission;
        this.agents = agents;
        // a Start and at most one LinkBroken per admitted push, a PutDone and a Delivered per layer in the window
        this.queue = new CommandQueue<>(PushCommand.class, 2 * maxRequests + 2 * window);
        this.agent = new PushAgent(queue, transfer, link, clock, window, chunkBytes, new PushAgent.Callbacks() {
            @Override
            public void pushed(long bytes) {
                admission.pushed(bytes);
            }

            @Override
            public void layerLag(long nanos) {
                admission.layerLag(nanos);
            }

            @Override
            public void completed(Push p) {
                open.remove(p.id);
                admission.completed();
                admission.leave(p.owner);
            }

            @Override
            public void failed(Push p, String reason) {
                open.remove(p.id);
                admission.failed();
                admission.leave(p.owner);
            }
        });
        this.runner = agents.add(new AgentRunner(agent, agent.idleStrategy()));
        runner.start();
    }

    /**
     * StartPush.
     *
     * @return the push id
     * @throws EngineException INVALID_ARGUMENT (handshake, blocks, shm objects), FAILED_PRECONDITION (no layers, unequal
     *     TP, a layout that differs), UNAVAILABLE (the decode server cannot be reached), RESOURCE_EXHAUSTED
     */
    public long start(
            Principal caller,
            OptionalInt callerUid,
            String instanceId,
            int tpRank,
            String requestId,
            byte[] handshake,
            List<Long> blockIds,
            String layerReadyShm,
            String pushStateShm,
            long timeoutMs) {
        InstanceLimits.requireName("request_id", requestId);
        RankLayers rank = layers.find(caller, instanceId, tpRank)
                .orElseThrow(() -> EngineException.failedPrecondition("instance " + instanceId + " rank " + tpRank
                        + " has no push layers registered (RegisterPushLayers)"));
        if (blockIds.isEmpty()) {
            throw EngineException.invalidArgument("block_ids must not be empty");
        }
        long[] blocks = blockIds.stream().mapToLong(Long::longValue).toArray();
        for (long b : blocks) {
            if (!rank.layers().get(0).containsBlock(b)) {
                throw EngineException.invalidArgument("block id " + b + " is outside the "
                        + rank.layers().get(0).numBlocks() + " blocks of instance " + instanceId);
            }
        }
        Handshakes.Parsed parsed = Handshakes.parse(seal, handshakes, handshake, rank, blocks.length);
        long timeout = Deadlines.bounded(timeoutMs, defaultTimeoutNanos);
        long deadline = clock.nanoTime() + timeout;
        PeerId peer = new PeerId(parsed.handshake().decodeAddress());
        connect(peer, parsed.handshake().transferDescriptor());
        StagingLayout layout = StagingLayout.of(rank, blocks.length);
        List<AutoCloseable> undo = new ArrayList<>();
        admission.admit(caller);
        boolean done = false;
        try {
            if (!rank.retain()) {
                throw EngineException.failedPrecondition(
                        "instance " + instanceId + " rank " + tpRank + " was re-registered meanwhile; retry");
            }
            undo.add(rank::release);
            LoadStateSignal state = ShmObjects.attachState("push_state_shm", pushStateShm, callerUid);
            LayerReadySignal ready = ShmObjects.openReady(layerReadyShm, rank.layerCount(), callerUid);
            undo.add(ready);
            PinnedAllocation buffer =
                    staging.allocate("push staging of instance " + instanceId + " rank " + tpRank, layout.totalBytes());
            undo.add(buffer::release);
            long id = ids.incrementAndGet();
            Push p = new Push(
                    id,
                    requestId,
                    caller,
                    rank,
                    blocks,
                    ready,
                    state,
                    buffer,
                    layout,
                    peer,
                    parsed.receive(),
                    parsed.target(),
                    deadline);
            open.put(id, p);
            switch (queue.offer(new PushCommand.Start(p))) {
                case ACCEPTED -> {}
                case FULL -> throw EngineException.resourceExhausted("the push agent's queue is full");
                case CLOSED -> throw EngineException.unavailable("the prefill server is shutting down");
            }
            done = true;
            return id;
        } finally {
            if (!done) {
                for (int i = undo.size() - 1; i >= 0; i--) {
                    closeQuietly(undo.get(i));
                }
                admission.leave(caller);
            }
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // releasing a half-built push; the first failure is the one reported
        }
    }

    /** Connects to a decode server unless already connected to this incarnation of it (same descriptor). */
    private void connect(PeerId peer, byte[] descriptorBytes) {
        byte[] known = connected.get(peer);
        if (known != null && Arrays.equals(known, descriptorBytes) && transfer.isConnected(peer)) {
            return;
        }
        synchronized (this) {
            known = connected.get(peer);
            if (known != null && Arrays.equals(known, descriptorBytes) && transfer.isConnected(peer)) {
                return;
            }
            HandshakeDescriptor remote;
            try {
                remote = HandshakeDescriptor.decode(descriptorBytes);
            } catch (TransferException e) {
                throw EngineException.invalidArgument("handshake: transfer descriptor: " + e.getMessage());
            }
            try {
                transfer.connect(peer, remote, connectTimeoutNanos)
                        .get(connectTimeoutNanos + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS);
            } catch (TransferException e) {
                throw EngineException.failedPrecondition("decode server " + peer + ": " + e.getMessage());
            } catch (ExecutionException | TimeoutException e) {
                Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                throw EngineException.unavailable("cannot connect to decode server " + peer + ": " + cause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw EngineException.unavailable("interrupted connecting to decode server " + peer);
            }
            connected.put(peer, descriptorBytes.clone());
        }
    }

    public int open() {
        return open.size();
    }

    public List<PushView.Request> view() {
        List<PushView.Request> out = new ArrayList<>();
        for (Push p : open.values()) {
            out.add(new PushView.Request(
                    Long.toString(p.id),
                    p.requestId,
                    p.rank.instanceId(),
                    p.rank.tpRank(),
                    p.deliveredLayers,
                    p.layers()));
        }
        return out;
    }

    /** Stops the agent; call after the transfer engine closed, so no put can still read a staging range. */
    @Override
    public void close() {
        runner.close();
        agents.remove(runner);
    }
}
