package io.pegaflow.testkit;

import com.google.protobuf.ByteString;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.LeaseLoad;
import io.pegaflow.proto.LoadRequest;
import io.pegaflow.proto.RegisterContextRequest;
import io.pegaflow.proto.RegisterContextResponse;
import io.pegaflow.proto.SaveLayer;
import io.pegaflow.proto.SaveRequest;
import io.pegaflow.proto.SaveResponse;
import io.pegaflow.proto.UnregisterRequest;
import io.pegaflow.proto.UnregisterResponse;
import io.pegaflow.proto.compat.GroupedLeaseLoad;
import io.pegaflow.proto.compat.GroupedLoadRequest;
import io.pegaflow.proto.compat.LoadGroup;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Plays the worker role of the reference vLLM connector ({@code python/pegaflow/connector/worker.py} of
 * novitalabs/pegaflow v0.22.4) against a real server over gRPC, with host-backend "device memory"
 * ({@link ShmDeviceMemory}) in place of CUDA tensors.
 *
 * <p>It sends what the reference worker sends: one {@code RegisterContextBatch} with every layer, {@code Save} with
 * the same block ids and hashes for every layer, {@code Load} with a fresh {@link LoadStateShm} and all registered
 * layer names, {@code UnregisterContext} at the end. Around those it fills, zeroes and verifies the bytes each block
 * owns under its layout (both K and V planes when split, {@code G·B} contiguous bytes otherwise), never touching
 * other bytes. {@link #stub()} and the {@code *Request} builders are there for negative tests.
 *
 * <p>Ownership: the worker owns its channel and the shm objects it allocated for layers added with
 * {@link Builder#layer(String, KvLayout)} or {@link Builder#sharedLayers(List, KvLayout)}; {@link #close()} shuts the
 * channel and unlinks those. Memory passed to {@link Builder#layer(String, KvLayout, ShmDeviceMemory, long)} stays
 * the caller's. Closing does not unregister: call {@link #unregister()} first when the test needs it.
 *
 * <p>Thread-safety: RPC methods may be called from several threads (gRPC stubs are thread-safe). Fill, zero and
 * verify access shared memory without synchronisation: do not run them on a block that another thread, or an
 * in-flight server load, is writing. {@link #close()} is idempotent.
 */
public final class MockVllmWorker implements AutoCloseable {
    private final ManagedChannel channel;
    private final EngineGrpc.EngineBlockingStub stub;
    private final String instanceId;
    private final String namespace;
    private final int tpRank;
    private final int tpSize;
    private final int worldSize;
    private final int deviceId;
    private final int ppRank;
    private final int numLayers;
    private final ConnectorRelease release;
    private final Duration rpcTimeout;
    private final Duration loadTimeout;
    private final List<LayerRegion> layers;
    private final List<ShmDeviceMemory> ownedMemories;
    private final Map<String, Integer> groups;
    private final AtomicBoolean closed = new AtomicBoolean();

    MockVllmWorker(Builder b, List<LayerRegion> layers, List<ShmDeviceMemory> ownedMemories) {
        this.instanceId = b.instanceId;
        this.namespace = b.namespace;
        this.tpRank = b.tpRank;
        this.tpSize = b.tpSize;
        this.worldSize = b.worldSize;
        this.deviceId = b.deviceId;
        this.ppRank = b.ppRank;
        this.numLayers = b.numLayers >= 0 ? b.numLayers : layers.size();
        this.release = b.release;
        this.rpcTimeout = b.rpcTimeout;
        this.loadTimeout = b.loadTimeout;
        this.layers = List.copyOf(layers);
        this.ownedMemories = List.copyOf(ownedMemories);
        this.groups = Map.copyOf(b.groups);
        this.channel = TestkitChannels.open(b.host, b.port, b.transport);
        this.stub = EngineGrpc.newBlockingStub(channel);
    }

    /** A builder preset to the reference harness identity, with no layers yet. */
    public static Builder builder(String host, int port) {
        return new Builder(host, port);
    }

    public String instanceId() {
        return instanceId;
    }

    public String namespace() {
        return namespace;
    }

    public int tpRank() {
        return tpRank;
    }

    public int tpSize() {
        return tpSize;
    }

    public int worldSize() {
        return worldSize;
    }

    public int deviceId() {
        return deviceId;
    }

    public int ppRank() {
        return ppRank;
    }

    /** The registered layers, in registration order. */
    public List<LayerRegion> layers() {
        return layers;
    }

    public List<String> layerNames() {
        return layers.stream().map(LayerRegion::name).toList();
    }

    /** The raw blocking stub, without a deadline, for negative tests. */
    public EngineGrpc.EngineBlockingStub stub() {
        return stub;
    }

    public ManagedChannel channel() {
        return channel;
    }

    /** The connector release this worker plays ({@link ConnectorRelease#V0_22_4} unless the builder said otherwise). */
    public ConnectorRelease connector() {
        return release;
    }

    /** The {@code RegisterContextBatch} request {@link #register()} sends; use {@code toBuilder()} to break it. */
    public RegisterContextRequest registerRequest() {
        RegisterContextRequest.Builder r = RegisterContextRequest.newBuilder()
                .setInstanceId(instanceId)
                .setNamespace(namespace)
                .setTpRank(tpRank)
                .setTpSize(tpSize)
                .setWorldSize(worldSize)
                .setDeviceId(deviceId)
                .setNumLayers(numLayers)
                .setPpRank(ppRank);
        for (LayerRegion layer : layers) {
            KvLayout l = layer.layout();
            r.addLayerNames(layer.name())
                    .addWrapperBytes(ByteString.copyFrom(layer.descriptor()))
                    .addNumBlocks(l.numBlocks())
                    .addBytesPerBlock(l.bytesPerBlock())
                    .addKvStrideBytes(l.kvStrideBytes())
                    .addSegments(l.segments());
        }
        release.shape(r, numLayers, i -> groupOf(r.getLayerNames(i)));
        return r.build();
    }

    /**
     * Registers every layer in one batch.
     *
     * @throws StatusRuntimeException when the server rejects it
     */
    public RegisterContextResponse register() {
        return deadlineStub().registerContextBatch(registerRequest());
    }

    /** The storage group this worker declares for {@code layerName} (0 unless {@link Builder#group} said otherwise). */
    public int groupOf(String layerName) {
        return groups.getOrDefault(layerName, 0);
    }

    /** The names of this worker's layers in storage group {@code group}, in registration order. */
    public List<String> layerNames(int group) {
        return layerNames().stream().filter(n -> groupOf(n) == group).toList();
    }

    /**
     * One {@code Save} of several layer sets, each with its own blocks, as a hybrid connector sends it: attention
     * layers for every new block, state layers only at checkpoints.
     */
    public SaveRequest saveRequest(List<LayerBlocks> sets) {
        SaveRequest.Builder r = SaveRequest.newBuilder()
                .setInstanceId(instanceId)
                .setTpRank(tpRank)
                .setDeviceId(deviceId)
                .setPpRank(ppRank);
        for (LayerBlocks set : sets) {
            for (String name : set.layerNames()) {
                r.addSaves(SaveLayer.newBuilder()
                        .setLayerName(name)
                        .addAllBlockIds(set.blockIds())
                        .addAllBlockHashes(set.hashes()));
            }
        }
        return r.build();
    }

    /** Sends {@link #saveRequest(List)}; returns once the server's device-to-pool copy finished. */
    public SaveResponse save(List<LayerBlocks> sets) {
        return deadlineStub().save(saveRequest(sets));
    }

    /** The {@code Save} request {@link #save} sends: every layer gets the same block ids and hashes. */
    public SaveRequest saveRequest(List<Integer> blockIds, List<ByteString> hashes) {
        SaveRequest.Builder r = SaveRequest.newBuilder()
                .setInstanceId(instanceId)
                .setTpRank(tpRank)
                .setDeviceId(deviceId)
                .setPpRank(ppRank);
        for (LayerRegion layer : layers) {
            r.addSaves(SaveLayer.newBuilder()
                    .setLayerName(layer.name())
                    .addAllBlockIds(blockIds)
                    .addAllBlockHashes(hashes));
        }
        return r.build();
    }

    /**
     * Saves blocks of every layer; returns once the server's device-to-pool copy finished. Sealing is asynchronous:
     * poll with {@link MockScheduler#awaitSealed} before expecting hits.
     *
     * @throws StatusRuntimeException when the server rejects it
     */
    public SaveResponse save(List<Integer> blockIds, List<ByteString> hashes) {
        return deadlineStub().save(saveRequest(blockIds, hashes));
    }

    /** A {@code Load} request naming {@code loadStateShm}, for negative tests (e.g. a name that does not exist). */
    public LoadRequest loadRequest(String loadStateShm, List<LeaseLoad> loads, List<String> layerNames) {
        return LoadRequest.newBuilder()
                .setInstanceId(instanceId)
                .setTpRank(tpRank)
                .setDeviceId(deviceId)
                .setLoadStateShm(loadStateShm)
                .addAllLayerNames(layerNames)
                .addAllLoads(loads)
                .build();
    }

    /** Loads one lease into {@code blockIds} of every registered layer and waits for the load state (default timeout). */
    public LoadResult load(ByteString lease, List<Integer> blockIds) {
        return load(lease, blockIds, loadTimeout);
    }

    /** As {@link #load(ByteString, List)}, waiting at most {@code timeout} for the load state. */
    public LoadResult load(ByteString lease, List<Integer> blockIds, Duration timeout) {
        if (release.groupedLoad()) {
            // As a 0.23.7+ connector loads a dense model: one group of every layer, every target present.
            return loadGroups(
                    List.of(GroupedLoads.group(layerNames())),
                    List.of(GroupedLoads.lease(lease, List.of(GroupedLoads.targets(List.copyOf(blockIds))))),
                    timeout);
        }
        LeaseLoad load =
                LeaseLoad.newBuilder().setLease(lease).addAllBlockIds(blockIds).build();
        return load(List.of(load), layerNames(), timeout);
    }

    /**
     * Sends one {@code Load} with a fresh {@link LoadStateShm}; on RPC success waits for its terminal state, on RPC
     * failure reads the state as it is. The load state is unlinked before returning.
     *
     * @throws TestkitTimeoutException when the RPC succeeded but the state stayed pending for {@code timeout}
     */
    public LoadResult load(List<LeaseLoad> loads, List<String> layerNames, Duration timeout) {
        return withLoadState(timeout, shm -> deadlineStub().load(loadRequest(shm, loads, layerNames)));
    }

    /**
     * Sends one grouped {@code Load} (pegaflow-llm 0.23.7 and later, whatever this worker's release) with a fresh
     * {@link LoadStateShm}, and reads the outcome as {@link #load(List, List, Duration)} does.
     */
    public LoadResult loadGroups(List<LoadGroup> groups, List<GroupedLeaseLoad> loads, Duration timeout) {
        return withLoadState(
                timeout,
                shm -> GroupedLoads.call(
                        channel,
                        GroupedLoadRequest.newBuilder()
                                .setInstanceId(instanceId)
                                .setTpRank(tpRank)
                                .setDeviceId(deviceId)
                                .setLoadStateShm(shm)
                                .addAllGroups(groups)
                                .addAllLoads(loads)
                                .build(),
                        rpcTimeout));
    }

    /** Runs {@code send} with a fresh load state's name; on success waits for its terminal value, else reads it. */
    private static LoadResult withLoadState(Duration timeout, Consumer<String> send) {
        try (LoadStateShm state = LoadStateShm.create()) {
            Status status = Status.OK;
            try {
                send.accept(state.name());
            } catch (StatusRuntimeException e) {
                status = e.getStatus();
            }
            long value = status.isOk() ? state.awaitTerminal(timeout) : state.state();
            return new LoadResult(status, value, state.name());
        }
    }

    /**
     * Unregisters the instance.
     *
     * @throws StatusRuntimeException when the server rejects it (e.g. FAILED_PRECONDITION, instance not found)
     */
    public UnregisterResponse unregister() {
        return deadlineStub()
                .unregisterContext(
                        UnregisterRequest.newBuilder().setInstanceId(instanceId).build());
    }

    /** Fills the owned bytes of {@code blockIds} in every layer with {@link BlockPattern#perByte(long)}. */
    public void fillBlocks(List<Integer> blockIds, int salt) {
        fillBlocks(blockIds, BlockPattern.perByte(salt));
    }

    /** Fills the owned bytes of {@code blockIds} in every layer, each layer with {@code pattern.forSlot(layer, tp)}. */
    public void fillBlocks(List<Integer> blockIds, BlockPattern pattern) {
        fillBlocks(layerNames(), blockIds, pattern);
    }

    /** As {@link #fillBlocks(List, BlockPattern)}, in the named layers only. */
    public void fillBlocks(List<String> layerNames, List<Integer> blockIds, BlockPattern pattern) {
        for (LayerRegion layer : layers) {
            if (!layerNames.contains(layer.name())) {
                continue;
            }
            BlockPattern slotPattern = pattern.forSlot(layer.name(), tpRank);
            int rangeBytes = rangeBytes(layer);
            byte[] buffer = new byte[rangeBytes];
            for (int block : blockIds) {
                checkBlock(layer, block);
                for (int r = 0; r < layer.layout().rangesPerBlock(); r++) {
                    slotPattern.fill(block, (long) r * rangeBytes, buffer, 0, rangeBytes);
                    layer.memory().writeBytes(layer.rangeOffset(block, r), buffer);
                }
            }
        }
    }

    /** Zeroes the owned bytes of {@code blockIds} in every layer. */
    public void zeroBlocks(List<Integer> blockIds) {
        zeroBlocks(layerNames(), blockIds);
    }

    /** Zeroes the owned bytes of {@code blockIds} in the named layers. */
    public void zeroBlocks(List<String> layerNames, List<Integer> blockIds) {
        for (LayerRegion layer : layers) {
            if (!layerNames.contains(layer.name())) {
                continue;
            }
            for (int block : blockIds) {
                checkBlock(layer, block);
                for (int r = 0; r < layer.layout().rangesPerBlock(); r++) {
                    layer.memory()
                            .fill(layer.rangeOffset(block, r), layer.layout().rangeBytes(), (byte) 0);
                }
            }
        }
    }

    /** Asserts the owned bytes of {@code blockIds} equal {@link BlockPattern#perByte(long)} of {@code salt}. */
    public void verifyBlocks(List<Integer> blockIds, int salt) {
        verifyBlocks(blockIds, BlockPattern.perByte(salt));
    }

    /**
     * Asserts the owned bytes of {@code blockIds} in every layer equal what {@link #fillBlocks(List, BlockPattern)}
     * wrote.
     *
     * @throws AssertionError naming the first differing layer, block, byte and values
     */
    public void verifyBlocks(List<Integer> blockIds, BlockPattern pattern) {
        firstMismatch(blockIds, pattern).ifPresent(m -> {
            throw new AssertionError(m);
        });
    }

    /**
     * Asserts the owned bytes of {@code blockIds} are all zero in every layer.
     *
     * @throws AssertionError naming the first non-zero layer, block and byte
     */
    public void verifyZeroed(List<Integer> blockIds) {
        firstMismatch(blockIds, null).ifPresent(m -> {
            throw new AssertionError(m);
        });
    }

    /**
     * The first difference between the owned bytes of {@code blockIds} and {@code pattern} (all zero when null), or
     * empty when every byte matches.
     */
    public Optional<String> firstMismatch(List<Integer> blockIds, @Nullable BlockPattern pattern) {
        return firstMismatch(layerNames(), blockIds, pattern);
    }

    /** As {@link #firstMismatch(List, BlockPattern)}, in the named layers only. */
    public Optional<String> firstMismatch(
            List<String> layerNames, List<Integer> blockIds, @Nullable BlockPattern pattern) {
        for (LayerRegion layer : layers) {
            if (!layerNames.contains(layer.name())) {
                continue;
            }
            BlockPattern slotPattern = pattern == null ? null : pattern.forSlot(layer.name(), tpRank);
            int rangeBytes = rangeBytes(layer);
            byte[] expected = new byte[rangeBytes];
            for (int block : blockIds) {
                checkBlock(layer, block);
                for (int r = 0; r < layer.layout().rangesPerBlock(); r++) {
                    if (slotPattern != null) {
                        slotPattern.fill(block, (long) r * rangeBytes, expected, 0, rangeBytes);
                    }
                    long offset = layer.rangeOffset(block, r);
                    byte[] actual = layer.memory().readBytes(offset, rangeBytes);
                    Optional<String> m = compare(layer, block, r, offset, expected, actual);
                    if (m.isPresent()) {
                        return m;
                    }
                }
            }
        }
        return Optional.empty();
    }

    /** Shuts the channel down and unlinks the shm objects this worker allocated; idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            TestkitChannels.shutdown(channel);
        } finally {
            ownedMemories.forEach(ShmDeviceMemory::close);
        }
    }

    @Override
    public String toString() {
        return "MockVllmWorker[" + instanceId + " tp" + tpRank + "/" + tpSize + " pp" + ppRank + " dev" + deviceId
                + ", layers=" + layerNames() + "]";
    }

    private EngineGrpc.EngineBlockingStub deadlineStub() {
        return stub.withDeadlineAfter(rpcTimeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    private static Optional<String> compare(
            LayerRegion layer, int block, int range, long offset, byte[] expected, byte[] actual) {
        int first = -1;
        int count = 0;
        for (int i = 0; i < expected.length; i++) {
            if (expected[i] != actual[i]) {
                if (first < 0) {
                    first = i;
                }
                count++;
            }
        }
        if (first < 0) {
            return Optional.empty();
        }
        return Optional.of(String.format(
                "layer %s block %d %s: %d of %d bytes differ, first at byte %d (shm %s offset %d):"
                        + " expected 0x%02x, got 0x%02x",
                layer.name(),
                block,
                layer.layout().isSplit() ? (range == 0 ? "K plane" : "V plane") : "range",
                count,
                expected.length,
                first,
                layer.memory().name(),
                offset + first,
                expected[first] & 0xFF,
                actual[first] & 0xFF));
    }

    private static int rangeBytes(LayerRegion layer) {
        long bytes = layer.layout().rangeBytes();
        if (bytes > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("layer " + layer.name() + ": range of " + bytes + " bytes too large");
        }
        return (int) bytes;
    }

    private static void checkBlock(LayerRegion layer, int block) {
        if (block < 0 || block >= layer.layout().numBlocks()) {
            throw new IllegalArgumentException("layer " + layer.name() + ": block " + block + " outside 0.."
                    + (layer.layout().numBlocks() - 1));
        }
    }

    /**
     * Configures a {@link MockVllmWorker}. Defaults: the reference harness identity ({@link ReferenceHarness}),
     * tp 0 of 1, world 1, device 0, pp 0, {@code num_layers} = number of layers, 30 s RPC deadline, 5 s load wait.
     *
     * <p>Not thread-safe. Allocates nothing until {@link #build()}.
     */
    public static final class Builder {
        /** Regions of one shared shm object are aligned like CUDA allocations' sub-ranges would be, to 4 KiB. */
        private static final long SHARED_ALIGNMENT_BYTES = 4096;

        private final String host;
        private final int port;
        private final List<PendingLayer> pending = new ArrayList<>();
        private final Map<String, Integer> groups = new HashMap<>();
        private String instanceId = ReferenceHarness.INSTANCE_ID;
        private String namespace = ReferenceHarness.NAMESPACE;
        private int tpRank;
        private int tpSize = 1;
        private int worldSize = 1;
        private int deviceId;
        private int ppRank;
        private int numLayers = -1;
        private Duration rpcTimeout = Duration.ofSeconds(30);
        private ConnectorRelease release = ConnectorRelease.V0_22_4;
        private Duration loadTimeout = ReferenceHarness.LOAD_TIMEOUT;
        private ChannelCredentials transport = InsecureChannelCredentials.create();

        private Builder(String host, int port) {
            this.host = host;
            this.port = port;
        }

        /** Over {@code value}: TLS, with a client certificate, for a listener that requires one. */
        public Builder tls(ChannelCredentials value) {
            this.transport = value;
            return this;
        }

        public Builder instanceId(String value) {
            this.instanceId = value;
            return this;
        }

        public Builder namespace(String value) {
            this.namespace = value;
            return this;
        }

        /** The effective TP rank and size the worker sends. */
        public Builder tp(int rank, int size) {
            this.tpRank = rank;
            this.tpSize = size;
            return this;
        }

        public Builder worldSize(int value) {
            this.worldSize = value;
            return this;
        }

        public Builder deviceId(int value) {
            this.deviceId = value;
            return this;
        }

        public Builder ppRank(int value) {
            this.ppRank = value;
            return this;
        }

        /** Overrides {@code num_layers} (default: the number of layers), e.g. for PP stages or negative tests. */
        public Builder numLayers(int value) {
            this.numLayers = value;
            return this;
        }

        /**
         * Puts {@code layerName} in hybrid storage group {@code group} (sent as {@code layer_group_ids} by releases
         * that send them; default 0), as the connector numbers vLLM's cache groups: attention 0, each recurrent-state
         * group 1, 2, ...
         */
        public Builder group(String layerName, int group) {
            groups.put(layerName, group);
            return this;
        }

        /** The connector release to play on the wire (default {@link ConnectorRelease#V0_22_4}). */
        public Builder connector(ConnectorRelease value) {
            release = value;
            return this;
        }

        /** Deadline of each unary RPC the worker's helpers send (the raw {@link #stub()} has none). */
        public Builder rpcTimeout(Duration value) {
            this.rpcTimeout = value;
            return this;
        }

        /** How long {@link MockVllmWorker#load(ByteString, List)} waits for the load state. */
        public Builder loadTimeout(Duration value) {
            this.loadTimeout = value;
            return this;
        }

        /** A layer in its own shm object of {@code layout.tensorBytes()}, owned by the worker. */
        public Builder layer(String name, KvLayout layout) {
            pending.add(new PendingLayer(List.of(name), layout, null, 0));
            return this;
        }

        /** A layer at {@code offsetBytes} of caller-owned memory (the worker never closes it). */
        public Builder layer(String name, KvLayout layout, ShmDeviceMemory memory, long offsetBytes) {
            pending.add(new PendingLayer(List.of(name), layout, memory, offsetBytes));
            return this;
        }

        /** Several layers of one layout back to back (4 KiB aligned) in one shm object, owned by the worker. */
        public Builder sharedLayers(List<String> names, KvLayout layout) {
            pending.add(new PendingLayer(List.copyOf(names), layout, null, 0));
            return this;
        }

        /** Allocates the worker-owned shm objects and opens the channel. */
        public MockVllmWorker build() {
            List<LayerRegion> regions = new ArrayList<>();
            List<ShmDeviceMemory> owned = new ArrayList<>();
            try {
                for (PendingLayer p : pending) {
                    p.addRegions(regions, owned);
                }
                return new MockVllmWorker(this, regions, owned);
            } catch (RuntimeException e) {
                owned.forEach(ShmDeviceMemory::close);
                throw e;
            }
        }

        /** {@code memory} is null when the worker allocates the layer's own shm object at build time. */
        private record PendingLayer(
                List<String> names,
                KvLayout layout,
                @Nullable ShmDeviceMemory memory,
                long offsetBytes) {
            void addRegions(List<LayerRegion> regions, List<ShmDeviceMemory> owned) {
                if (memory != null) {
                    regions.add(new LayerRegion(names.get(0), layout, memory, offsetBytes));
                    return;
                }
                long aligned = Math.addExact(layout.tensorBytes(), SHARED_ALIGNMENT_BYTES - 1)
                        / SHARED_ALIGNMENT_BYTES
                        * SHARED_ALIGNMENT_BYTES;
                long stride = Math.max(SHARED_ALIGNMENT_BYTES, aligned);
                ShmDeviceMemory shm = ShmDeviceMemory.create(Math.multiplyExact(stride, names.size()));
                owned.add(shm);
                for (int i = 0; i < names.size(); i++) {
                    regions.add(new LayerRegion(names.get(i), layout, shm, i * stride));
                }
            }
        }
    }
}
