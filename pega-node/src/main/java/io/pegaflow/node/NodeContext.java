package io.pegaflow.node;

import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.engine.EngineConfig;
import io.pegaflow.core.engine.EngineContext;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.node.remote.PeerBlocks;
import io.pegaflow.node.remote.RemoteConfig;
import io.pegaflow.node.remote.RemoteFetchTier;
import io.pegaflow.push.PushConfig;
import io.pegaflow.push.layout.HandshakeCodec;
import io.pegaflow.push.layout.HandshakeSeal;
import io.pegaflow.push.prefill.DecodeLink;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferKeys;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What one node is made of, set field by field and checked as a whole by {@link #conclude()} before anything is
 * mapped or started ({@link PegaNode#launch} concludes it). Required: the engine's settings and the device backend.
 * Optional: P2P transfers (and with them the remote tier) and the P/D push.
 */
public final class NodeContext {

    /** Makes the device backend once the pool's regions exist (the cuda backend registers them with the driver). */
    @FunctionalInterface
    public interface BackendFactory {
        DeviceBackend create(List<MemoryRegionInfo> poolRegions);
    }

    /**
     * The remote tier: fetches RAM and SSD misses from peers over the node's P2P transfer engine. The node builds it
     * and is its one owner.
     *
     * @param config deadlines and the fetch size
     * @param owners who owns which prefix (the metaserver)
     * @param peers how the tier reaches owners (gRPC in pega-server); the node owns it from launch and closes it once
     *     (through the tier, or itself when the launch fails before the tier exists)
     * @param self this node's advertised address: the requester id peers see, and the owner entry to skip
     * @param connected told of each peer once a handshake with it succeeded
     */
    public record Remote(
            RemoteConfig config,
            RemoteFetchTier.OwnerDirectory owners,
            PeerBlocks peers,
            String self,
            Consumer<PeerId> connected) {}

    /**
     * A UCX engine of the node.
     *
     * @param config NICs, lanes and transports
     * @param keys the {@code pega.*} keys a refused setting is reported under
     * @param shmPool whether this engine's UCX context may allocate the pool's shards (shared memory that peers on
     *     the same host attach); only with transports that allow shared memory, and only one context can
     */
    public record Ucx(TransferConfig config, TransferKeys keys, boolean shmPool) {
        boolean allocatesPool() {
            return shmPool && TransferConfig.allowsSharedMemory(config.transports());
        }
    }

    /**
     * The P/D push: its own UCX engine, its limits, the cluster seal, the handshake blob's wire encoding, how it calls
     * decode servers, and the address peers reach this node at (asked per request, so it may be known only once the
     * server is bound).
     */
    public record Push(
            Ucx ucx,
            PushConfig config,
            HandshakeSeal seal,
            HandshakeCodec handshakes,
            DecodeLink link,
            Supplier<String> advertiseAddress) {}

    private @Nullable EngineConfig engine;
    private @Nullable BackendFactory backend;
    private NanoClock clock = NanoClock.SYSTEM;
    private AgentGroup agents = new AgentGroup();
    private Consumer<EngineContext> engineSetup = c -> {};
    private @Nullable Ucx p2p;
    private @Nullable Remote remote;
    private @Nullable Push push;
    private boolean concluded;

    public NodeContext engine(EngineConfig config) {
        this.engine = config;
        return this;
    }

    public NodeContext backend(BackendFactory factory) {
        this.backend = factory;
        return this;
    }

    public NodeContext clock(NanoClock clock) {
        this.clock = clock;
        return this;
    }

    /** Where every agent of the node reports (health shows it). */
    public NodeContext agents(AgentGroup agents) {
        this.agents = agents;
        return this;
    }

    /**
     * What the application adds to the engine before it starts: limits, the journal, the SSD tier and spill, index
     * listeners, admission. Runs after the node set the pool, backend, clock and agents; the remote tier is added
     * after it, so it comes last in the tier chain.
     */
    public NodeContext engineSetup(Consumer<EngineContext> setup) {
        this.engineSetup = setup;
        return this;
    }

    public NodeContext p2p(Ucx ucx) {
        this.p2p = ucx;
        return this;
    }

    /** Adds the remote tier, which needs {@link #p2p P2P transfers}; it comes last in the tier chain. */
    public NodeContext remote(Remote remote) {
        this.remote = remote;
        return this;
    }

    public NodeContext push(Push push) {
        this.push = push;
        return this;
    }

    /**
     * Checks the context as a whole. Idempotent.
     *
     * @throws IllegalArgumentException naming what is missing or does not fit
     */
    public NodeContext conclude() {
        if (concluded) {
            return this;
        }
        if (engine == null) {
            throw new IllegalArgumentException("node: no engine configuration");
        }
        if (backend == null) {
            throw new IllegalArgumentException("node: no device backend");
        }
        if (remote != null && p2p == null) {
            throw new IllegalArgumentException("node: the remote tier fetches over P2P transfers, which are off");
        }
        concluded = true;
        return this;
    }

    EngineConfig engineConfig() {
        return Objects.requireNonNull(engine);
    }

    BackendFactory backendFactory() {
        return Objects.requireNonNull(backend);
    }

    NanoClock clock() {
        return clock;
    }

    AgentGroup agents() {
        return agents;
    }

    Consumer<EngineContext> engineSetup() {
        return engineSetup;
    }

    @Nullable
    Ucx p2p() {
        return p2p;
    }

    @Nullable
    Remote remote() {
        return remote;
    }

    @Nullable
    Push pushSettings() {
        return push;
    }
}
