package io.pegaflow.node;

import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.engine.EngineContext;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.node.remote.PeerBlocks;
import io.pegaflow.node.remote.RemoteFetchTier;
import io.pegaflow.push.PushEngine;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.ucx.UcxSharedMemory;
import io.pegaflow.transfer.ucx.UcxTransferEngine;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running node, built from a {@link NodeContext} in this order, each part from the ones before it:
 *
 * <ol>
 *   <li>the UCX context that allocates the pool's shards, when P2P (or else the push) runs over shared-memory
 *       transports (decision 0019): peers on this host then attach the pool instead of copying through a socket;
 *   <li>the pinned pool, then the device backend over its regions;
 *   <li>the P2P transfer engine over the pool's regions, and the remote tier over it;
 *   <li>the engine, which from here owns the pool, the backend and the tiers the application added (the remote tier
 *       it only borrows: the node owns it, since it must stop before the transfer engine closes);
 *   <li>the push engine, on the engine's staging allocator and registrations, with its own UCX engine (on the pool's
 *       context when its NICs and transports are the same).
 * </ol>
 *
 * <p>{@link #close()} is the one close, in reverse: the push engine, the remote tier's fetches, the P2P transfer engine
 * (its registrations of the pool go before the pool unmaps), the engine (tiers, backend, pool), and last the UCX
 * contexts (the pool handed their shards back). A launch that fails closes what it built, in the same order.
 */
public final class PegaNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PegaNode.class);

    private final PegaEngine engine;
    private final @Nullable TransferEngine transfers;
    private final @Nullable RemoteFetchTier remote;
    private final @Nullable PushEngine push;
    private final @Nullable UcxSharedMemory poolMemory;
    private final AgentGroup agents;
    /** Everything the node closes, in the one close order. */
    private final Deque<AutoCloseable> closeOrder;

    private boolean closed; // guarded by this

    private PegaNode(
            PegaEngine engine,
            @Nullable TransferEngine transfers,
            @Nullable RemoteFetchTier remote,
            @Nullable PushEngine push,
            @Nullable UcxSharedMemory poolMemory,
            AgentGroup agents,
            Deque<AutoCloseable> closeOrder) {
        this.engine = engine;
        this.transfers = transfers;
        this.remote = remote;
        this.push = push;
        this.poolMemory = poolMemory;
        this.agents = agents;
        this.closeOrder = closeOrder;
    }

    /**
     * Concludes {@code ctx} and builds the node.
     *
     * @throws IllegalArgumentException when the context, or what UCX or the engine make of it, cannot work; nothing
     *     stays mapped, registered or running then
     */
    public static PegaNode launch(NodeContext ctx) {
        ctx.conclude();
        Parts parts = new Parts();
        try {
            parts.build(ctx);
        } catch (RuntimeException | Error e) {
            closeAll(parts.closeOrder());
            throw e;
        }
        return new PegaNode(
                Objects.requireNonNull(parts.engine),
                parts.transfers,
                parts.remote,
                parts.push,
                parts.p2pContext != null ? parts.p2pContext : parts.pushContext,
                ctx.agents(),
                parts.closeOrder());
    }

    /** What a launch has built so far; on failure exactly these are closed, in {@link #closeOrder()}. */
    private static final class Parts {
        @Nullable
        UcxSharedMemory p2pContext;

        @Nullable
        UcxSharedMemory pushContext;
        /** Owned here until the engine takes them over; null from then on. */
        @Nullable
        PinnedMemoryPool pool;

        @Nullable
        DeviceBackend backend;

        @Nullable
        TransferEngine transfers;

        /** The remote tier's peer port until the tier takes it over; null from then on. */
        @Nullable
        PeerBlocks peers;

        @Nullable
        RemoteFetchTier remote;

        @Nullable
        PegaEngine engine;

        @Nullable
        PushEngine push;

        void build(NodeContext ctx) {
            NodeContext.Remote remoteSettings = ctx.remote();
            peers = remoteSettings == null ? null : remoteSettings.peers();
            NodeContext.Ucx p2p = ctx.p2p();
            NodeContext.Push pushSettings = ctx.pushSettings();
            if (p2p != null && p2p.allocatesPool()) {
                p2pContext = UcxStep.run(p2p.keys(), () -> UcxSharedMemory.open(p2p.config()));
            } else if (pushSettings != null && pushSettings.ucx().allocatesPool()) {
                NodeContext.Ucx ucx = pushSettings.ucx();
                pushContext = UcxStep.run(ucx.keys(), () -> UcxSharedMemory.open(ucx.config()));
            }
            PinnedMemoryPool mapped =
                    PinnedMemoryPool.create(ctx.engineConfig().pool(), p2pContext != null ? p2pContext : pushContext);
            pool = mapped;
            DeviceBackend device = ctx.backendFactory().create(mapped.regions());
            backend = device;
            LOG.info(
                    "pool ready: {} MiB in {} ms, backend {}",
                    mapped.capacityBytes() >> 20,
                    mapped.readyNanos() / 1_000_000,
                    device.name());

            if (p2p != null) {
                UcxSharedMemory shared = p2pContext;
                TransferEngine t = UcxStep.run(
                        p2p.keys(), () -> UcxTransferEngine.open(p2p.config(), shared, mapped.regions(), ctx.clock()));
                transfers = t;
                if (remoteSettings != null) {
                    remote = new RemoteFetchTier(
                            remoteSettings.owners(),
                            t,
                            remoteSettings.self(),
                            remoteSettings.config(),
                            ctx.clock(),
                            remoteSettings.peers(),
                            remoteSettings.connected());
                    peers = null; // the tier closes it
                }
            }

            EngineContext engineContext = new EngineContext()
                    .config(ctx.engineConfig())
                    .pool(mapped)
                    .backend(device)
                    .clock(ctx.clock())
                    .agents(ctx.agents());
            ctx.engineSetup().accept(engineContext);
            if (remote != null) {
                engineContext.tier(new LentTier(remote));
            }
            pool = null;
            backend = null;
            PegaEngine launched = PegaEngine.launch(engineContext); // closes pool, backend and tiers if it fails
            engine = launched;

            if (pushSettings != null) {
                push = pushEngine(ctx, pushSettings, launched, mapped);
            }
        }

        private PushEngine pushEngine(
                NodeContext ctx, NodeContext.Push settings, PegaEngine launched, PinnedMemoryPool mapped) {
            NodeContext.Ucx ucx = settings.ucx();
            UcxSharedMemory shared = pushContext;
            if (shared == null && p2pContext != null) {
                if (p2pContext.serves(ucx.config())) {
                    shared = p2pContext;
                    LOG.info("P/D push engine runs on the transfer engine's UCX context, which allocated the pool");
                } else {
                    LOG.info(
                            "P/D push engine has a UCX context of its own: its NICs/transports ({}, '{}') differ from"
                                    + " the P2P engine's, whose context allocated the pool, so pushes into this pool"
                                    + " from the same host are emulated puts; set them equal to make them copies"
                                    + " into shared memory",
                            String.join(",", ucx.config().nics()),
                            ucx.config().transports());
                }
            }
            UcxSharedMemory context = shared;
            TransferEngine pushTransfers = UcxStep.run(
                    ucx.keys(), () -> UcxTransferEngine.open(ucx.config(), context, mapped.regions(), ctx.clock()));
            try {
                return new PushEngine(
                        settings.config(),
                        settings.seal(),
                        settings.handshakes(),
                        launched.staging(),
                        launched.sideRegistrations(),
                        launched.workers(),
                        pushTransfers, // the push engine closes it
                        settings.link(),
                        ctx.clock(),
                        ctx.agents(),
                        settings.advertiseAddress());
            } catch (RuntimeException e) {
                pushTransfers.close();
                throw e;
            }
        }

        /**
         * The one close order: the push engine (its staging goes back to the pool, its UCX engine closes); the remote
         * tier, so no fetch starts a get on a transfer engine that is going away (the engine only borrowed it, so
         * this is its one close), or its peer port when the launch failed before the tier took it; the P2P transfer
         * engine, whose registrations of the pool go before the pool unmaps; the engine
         * (tiers, backend, pool), or the pool and backend it never took over; last the UCX contexts, once the pool
         * handed their shards back.
         */
        Deque<AutoCloseable> closeOrder() {
            Deque<AutoCloseable> order = new ArrayDeque<>();
            for (AutoCloseable part :
                    new AutoCloseable[] {push, remote, peers, transfers, engine, backend, pool, pushContext, p2pContext
                    }) {
                if (part != null) {
                    order.addLast(part);
                }
            }
            return order;
        }
    }

    private static void closeAll(Deque<AutoCloseable> order) {
        while (!order.isEmpty()) {
            AutoCloseable part = order.pollFirst();
            try {
                part.close();
            } catch (Exception | Error e) {
                // keep closing: what follows (the pool, the contexts) must still be released
                LOG.error("closing {} failed", part.getClass().getSimpleName(), e);
            }
        }
    }

    public PegaEngine engine() {
        return engine;
    }

    /** The P2P transfer engine, when transfers are on. */
    public Optional<TransferEngine> transfers() {
        return Optional.ofNullable(transfers);
    }

    /** The remote tier the node built and lent to the engine, when P2P transfers and a remote tier were given. */
    public Optional<RemoteFetchTier> remoteTier() {
        return Optional.ofNullable(remote);
    }

    public Optional<PushEngine> push() {
        return Optional.ofNullable(push);
    }

    /** The UCX context that allocated the pool's shards, when one did. */
    public Optional<UcxSharedMemory> poolMemory() {
        return Optional.ofNullable(poolMemory);
    }

    public AgentGroup agents() {
        return agents;
    }

    /** Closes every part once, in reverse build order. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        closeAll(closeOrder);
    }
}
