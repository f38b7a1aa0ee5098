package io.pegaflow.push.decode;

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
import io.pegaflow.push.layout.ReceiveKey;
import io.pegaflow.push.layout.StagingLayout;
import io.pegaflow.push.signal.ShmObjects;
import io.pegaflow.push.view.PushView;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import java.util.function.Supplier;

/**
 * The decode half of the push engine: prepares receives (staging in the pool, load_state objects attached, the
 * handshake blob), accepts arrivals and failures from prefill servers, and runs the {@link ReceiveAgent}. Thread-safe;
 * the RPC threads call in, the agent does the copies.
 */
public final class DecodeSide implements AutoCloseable {
    /** Blocks of one receive: 16k tokens at block size 16 is 1000, so this leaves room for 2M-token prompts. */
    public static final int MAX_BLOCKS = 131_072;

    private final PushLayerTable layers;
    private final HandshakeSeal seal;
    private final HandshakeCodec handshakes;
    private final StagingAllocator allocator;
    private final NanoClock clock;
    private final Supplier<String> advertiseAddress;
    private final byte[] transferDescriptor;
    private final long defaultTimeoutNanos;
    private final Map<Long, Receive> receives = new ConcurrentHashMap<>();
    private final CommandQueue<ReceiveCommand> queue;
    private final AgentRunner runner;
    private final SecureRandom random = new SecureRandom();
    /** Numbers the receives for views, which never show a receive's id (decision 0022). */
    private final AtomicLong sequence = new AtomicLong();

    private final AtomicLong quarantined = new AtomicLong();
    private final Admission admission;
    private final AgentGroup agents;
    private final ArrayDeque<PushView.ReceiveTimeline> recent = new ArrayDeque<>();

    /** The engine-wide bound on open pushes plus receives and each principal's share of it, and the counters. */
    public interface Admission {
        /**
         * Takes a request slot for {@code who}.
         *
         * @throws EngineException RESOURCE_EXHAUSTED naming the bound that refused it
         */
        void admit(Principal who);

        void leave(Principal who);

        void layerCopied(long bytes);

        void received();

        void receiveFailed();
    }

    public DecodeSide(
            PushLayerTable layers,
            HandshakeSeal seal,
            HandshakeCodec handshakes,
            StagingAllocator allocator,
            NanoClock clock,
            Supplier<String> advertiseAddress,
            byte[] transferDescriptor,
            long defaultTimeoutNanos,
            long quarantineNanos,
            int queueCapacity,
            AgentGroup agents,
            Admission admission) {
        this.layers = layers;
        this.seal = seal;
        this.handshakes = handshakes;
        this.allocator = allocator;
        this.clock = clock;
        this.advertiseAddress = advertiseAddress;
        this.transferDescriptor = transferDescriptor.clone();
        this.defaultTimeoutNanos = defaultTimeoutNanos;
        this.admission = admission;
        this.agents = agents;
        this.queue = new CommandQueue<>(ReceiveCommand.class, queueCapacity);
        ReceiveAgent agent = new ReceiveAgent(queue, receives, clock, quarantineNanos, new ReceiveAgent.Callbacks() {
            @Override
            public void layerCopied(long bytes) {
                admission.layerCopied(bytes);
            }

            @Override
            public void completed(Receive r, long nowNanos) {
                remember(r, true, nowNanos);
                endWatchers(r, true, "");
                admission.received();
                admission.leave(r.owner);
            }

            @Override
            public void failed(Receive r, String reason, long nowNanos) {
                remember(r, false, nowNanos);
                endWatchers(r, false, reason);
                admission.receiveFailed();
                admission.leave(r.owner);
            }

            @Override
            public LongConsumer quarantinedBytes() {
                return quarantined::addAndGet;
            }
        });
        this.runner = agents.add(new AgentRunner(agent, queue.idleStrategy(DEADLINE_IDLE_NANOS)));
        runner.start();
    }

    private static final long DEADLINE_IDLE_NANOS = 1_000_000;

    /** The prepared receive: its id and the handshake blob for the prefill side. */
    public record Prepared(long receiveId, byte[] handshake) {}

    /**
     * Reserves staging for every rank of {@code instanceId} and attaches each rank's load_state object.
     *
     * @throws EngineException INVALID_ARGUMENT (blocks, shm names), FAILED_PRECONDITION (a rank not registered, TP
     *     sizes that disagree), RESOURCE_EXHAUSTED (too many requests, the pool has no room)
     */
    public Prepared prepare(
            Principal caller,
            OptionalInt callerUid,
            String instanceId,
            String requestId,
            List<Long> blockIds,
            List<String> loadStateShm,
            long timeoutMs) {
        InstanceLimits.requireName("request_id", requestId);
        RankLayers rank0 = layers.find(caller, instanceId, 0)
                .orElseThrow(() -> EngineException.failedPrecondition(
                        "instance " + instanceId + " has no push layers registered (RegisterPushLayers, rank 0)"));
        int tpSize = rank0.tpSize();
        if (blockIds.isEmpty() || blockIds.size() > MAX_BLOCKS) {
            throw EngineException.invalidArgument(
                    "block_ids: expected 1 to " + MAX_BLOCKS + " blocks, got " + blockIds.size());
        }
        if (loadStateShm.size() != tpSize) {
            throw EngineException.invalidArgument("load_state_shm: one object per TP rank is needed, got "
                    + loadStateShm.size() + " for tp_size " + tpSize);
        }
        long[] blocks = blockIds.stream().mapToLong(Long::longValue).toArray();
        List<RankLayers> ranks = new ArrayList<>(tpSize);
        List<StagingLayout> layouts = new ArrayList<>(tpSize);
        List<PinnedAllocation> staging = new ArrayList<>(tpSize);
        List<LoadStateSignal> signals = new ArrayList<>(tpSize);
        admission.admit(caller);
        boolean done = false;
        try {
            for (int r = 0; r < tpSize; r++) {
                final int rank = r;
                RankLayers l = layers.find(caller, instanceId, r)
                        .orElseThrow(() -> EngineException.failedPrecondition(
                                "instance " + instanceId + " rank " + rank + " has no push layers registered"));
                if (l.tpSize() != tpSize || l.layerCount() != rank0.layerCount()) {
                    throw EngineException.failedPrecondition("instance " + instanceId + " rank " + r
                            + " registered tp_size " + l.tpSize() + " and " + l.layerCount() + " layers, rank 0 "
                            + tpSize + " and " + rank0.layerCount());
                }
                for (long b : blocks) {
                    if (!l.layers().get(0).containsBlock(b)) {
                        throw EngineException.invalidArgument("block id " + b + " is outside the "
                                + l.layers().get(0).numBlocks() + " blocks of instance " + instanceId);
                    }
                }
                if (!l.retain()) {
                    throw EngineException.failedPrecondition(
                            "instance " + instanceId + " rank " + r + " was re-registered meanwhile; retry");
                }
                ranks.add(l);
                StagingLayout layout = StagingLayout.of(l, blocks.length);
                layouts.add(layout);
                staging.add(allocator.allocate(
                        "receive staging of instance " + instanceId + " rank " + r, layout.totalBytes()));
                signals.add(ShmObjects.attachState("load_state_shm", loadStateShm.get(r), callerUid));
            }
            ReceiveKey key = ReceiveKey.of(newId(), random);
            long id = key.id();
            long[] bases = staging.stream().mapToLong(PinnedAllocation::address).toArray();
            byte[] h = Handshakes.build(
                    seal,
                    handshakes,
                    advertiseAddress.get(),
                    transferDescriptor,
                    key,
                    tpSize,
                    blocks.length,
                    ranks,
                    bases,
                    layouts);
            long timeout = Deadlines.bounded(timeoutMs, defaultTimeoutNanos);
            long now = clock.nanoTime();
            receives.put(
                    id,
                    new Receive(
                            key,
                            caller,
                            sequence.incrementAndGet(),
                            requestId,
                            instanceId,
                            blocks,
                            List.copyOf(ranks),
                            List.copyOf(layouts),
                            List.copyOf(staging),
                            List.copyOf(signals),
                            now,
                            now + timeout));
            done = true;
            return new Prepared(id, h);
        } finally {
            if (!done) {
                staging.forEach(PinnedAllocation::release);
                ranks.forEach(RankLayers::release);
                admission.leave(caller);
            }
        }
    }

    private long newId() {
        while (true) {
            long id = random.nextLong() & Long.MAX_VALUE;
            if (id != 0 && !receives.containsKey(id)) {
                return id;
            }
        }
    }

    /**
     * The receive {@code receiveId} for a server-to-server RPC that presented {@code secret}. A wrong secret gets the
     * answer of an unknown id, so a caller who learned an id learns nothing more from trying it.
     */
    private Receive authenticated(long receiveId, byte[] secret) {
        Receive r = receives.get(receiveId);
        if (r == null || !r.key.admits(secret)) {
            throw ReceiveAgent.unknown(receiveId);
        }
        return r;
    }

    /** A layer of a rank arrived (LayerArrived, with the receive's secret). */
    public void arrived(long receiveId, byte[] secret, int tpRank, int layer) {
        Receive r = authenticated(receiveId, secret);
        if (tpRank < 0 || tpRank >= r.tpSize() || layer < 0 || layer >= r.layers()) {
            throw EngineException.invalidArgument("LayerArrived: rank " + tpRank + " layer " + layer
                    + " is outside tp_size " + r.tpSize() + " and " + r.layers() + " layers");
        }
        offer(new ReceiveCommand.Arrived(receiveId, tpRank, layer));
    }

    /**
     * WatchReceive: {@code watcher} is ended when the receive ends. A receive that is not open (it ended, or never
     * was) is FAILED_PRECONDITION; a receive that ends while the watcher is being added ends it all the same.
     */
    public void watch(long receiveId, byte[] secret, int tpRank, ReceiveWatcher watcher) {
        Receive r = authenticated(receiveId, secret);
        if (tpRank < 0 || tpRank >= r.tpSize()) {
            throw EngineException.invalidArgument("WatchReceive: rank " + tpRank + " is outside tp_size " + r.tpSize());
        }
        r.watchers.add(watcher);
        if (!receives.containsKey(receiveId)) {
            // the agent may have ended the receive before it could see this watcher
            watcher.ended(false, "the receive ended while the watch was being set up");
        }
    }

    /**
     * A prefill server's watch stream broke before the receive ended (its process is gone, or it cancelled). Only a
     * stream that presented the receive's secret counts: a stranger's watch, opened and cancelled, fails nothing.
     */
    public void linkLost(long receiveId, byte[] secret, int tpRank) {
        Receive r = receives.get(receiveId);
        if (r != null && r.key.admits(secret)) {
            // best effort: a full or closed queue leaves the receive to its deadline or to the shutdown
            queue.offer(new ReceiveCommand.LinkLost(receiveId, tpRank));
        }
    }

    private static void endWatchers(Receive r, boolean succeeded, String reason) {
        for (ReceiveWatcher w = r.watchers.poll(); w != null; w = r.watchers.poll()) {
            w.ended(succeeded, reason);
        }
    }

    /** The prefill side gave up on a rank (PushFailed, with the receive's secret). */
    public void pushFailed(long receiveId, byte[] secret, int tpRank, String reason) {
        authenticated(receiveId, secret);
        offer(new ReceiveCommand.Fail(receiveId, "the prefill server gave up on rank " + tpRank + ": " + reason));
    }

    /**
     * The decode worker cancelled (CancelReceive): only the principal that prepared the receive may.
     *
     * @throws EngineException FAILED_PRECONDITION for a receive that is not open, PERMISSION_DENIED for another
     *     principal's
     */
    public void cancel(Principal caller, long receiveId) {
        Receive r = receives.get(receiveId);
        if (r == null) {
            throw ReceiveAgent.unknown(receiveId);
        }
        if (!r.owner.equals(caller)) {
            throw EngineException.permissionDenied("receive " + Long.toUnsignedString(receiveId)
                    + " was prepared by another user; only its owner can cancel it");
        }
        offer(new ReceiveCommand.Fail(receiveId, "cancelled by the decode worker"));
    }

    private void offer(ReceiveCommand c) {
        switch (queue.offer(c)) {
            case ACCEPTED -> {}
            case FULL -> throw EngineException.resourceExhausted("the receive agent's queue is full");
            case CLOSED -> throw EngineException.unavailable("the decode server is shutting down");
        }
    }

    public int open() {
        return receives.size();
    }

    public long quarantinedBytes() {
        return quarantined.get();
    }

    public List<PushView.Request> view() {
        List<PushView.Request> out = new ArrayList<>();
        for (Receive r : receives.values()) {
            out.add(new PushView.Request(
                    "r" + r.seq, r.requestId, r.instanceId, -1, r.layersCopied, r.layers() * r.tpSize()));
        }
        return out;
    }

    // called by the receive agent as a receive ends (after the ranks' load_state objects are written, so a worker that
    // saw its verdict may have to look again for the timeline); the view reads under the same lock
    private void remember(Receive r, boolean succeeded, long nowNanos) {
        List<Long> layers = new ArrayList<>(r.layerOnDeviceNanos.length);
        for (long t : r.layerOnDeviceNanos) {
            layers.add(t);
        }
        PushView.ReceiveTimeline t = new PushView.ReceiveTimeline(
                "r" + r.seq, r.requestId, r.instanceId, succeeded, r.preparedNanos, nowNanos, List.copyOf(layers));
        synchronized (recent) {
            if (recent.size() == PushView.RECENT) {
                recent.removeFirst();
            }
            recent.addLast(t);
        }
    }

    /** The last receives that ended, oldest first. */
    public List<PushView.ReceiveTimeline> recent() {
        synchronized (recent) {
            return List.copyOf(recent);
        }
    }

    /** Stops the agent, which fails what is still open and frees all staging. */
    @Override
    public void close() {
        runner.close();
        agents.remove(runner);
    }
}
