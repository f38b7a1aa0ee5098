package io.pegaflow.bench.loadgen;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.LeaseLoad;
import io.pegaflow.proto.LoadRequest;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.QueryRequest;
import io.pegaflow.proto.QueryResponse;
import io.pegaflow.proto.RegisterContextRequest;
import io.pegaflow.proto.ReleaseRequest;
import io.pegaflow.proto.SaveLayer;
import io.pegaflow.proto.SaveRequest;
import io.pegaflow.proto.SessionEvent;
import io.pegaflow.proto.SessionRequest;
import io.pegaflow.proto.UnregisterRequest;
import io.pegaflow.sys.Posix;
import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.ShmDeviceMemory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * One simulated vLLM worker: its own instance (tp 1 of 1, world 1), {@code layers} layers of {@code blocksPerRequest}
 * blocks in one {@code /dev/shm} object, and its own channel. It sends exactly what the reference connector sends
 * for each operation (see {@link OpMix}); block j of a prefix always lives in device block j.
 *
 * <p>Driven by one thread. Not thread-safe.
 */
final class SimWorker implements AutoCloseable {
    private static final long POISON = 0xA5;
    private static final long LAYER_ALIGNMENT = 4096;
    private static final long MIN_BACKOFF_NANOS = 10_000_000L;
    private static final long MAX_BACKOFF_NANOS = 1_000_000_000L;

    private final String instanceId;
    private final LoadGenOptions options;
    private final ManagedChannel channel;
    private final EngineGrpc.EngineBlockingStub stub;
    private final Prefixes prefixes;
    private final int layers;
    private final ShmDeviceMemory device;
    /** The current back-off after UNAVAILABLE; 0 once an operation succeeded. Only the worker's thread uses it. */
    private long backoffNanos;

    private Stats stats;
    private final long layerStride;
    private final List<String> layerNames;
    private final int deviceBlocks;
    private final long blockBytes;
    private long requestCounter;
    private @Nullable ClientCall<SessionRequest, SessionEvent> session; // null until register() opened it

    SimWorker(
            String instanceId,
            LoadGenOptions options,
            ManagedChannel channel,
            Prefixes prefixes,
            Stats stats,
            int layers,
            int deviceBlocks,
            long blockBytes) {
        this.instanceId = instanceId;
        this.options = options;
        this.channel = channel;
        this.stub = EngineGrpc.newBlockingStub(channel);
        this.prefixes = prefixes;
        this.stats = stats;
        this.layers = layers;
        long layerBytes = Math.multiplyExact(deviceBlocks, blockBytes);
        this.layerStride = (layerBytes + LAYER_ALIGNMENT - 1) / LAYER_ALIGNMENT * LAYER_ALIGNMENT;
        this.device = ShmDeviceMemory.create(Math.multiplyExact(layerStride, layers));
        List<String> names = new ArrayList<>(layers);
        for (int l = 0; l < layers; l++) {
            names.add("layer_" + l);
        }
        this.layerNames = List.copyOf(names);
        this.deviceBlocks = deviceBlocks;
        this.blockBytes = blockBytes;
    }

    /** Where later operations record (the e2e scenario keeps one {@link Stats} per measurement). */
    void useStats(Stats target) {
        this.stats = target;
    }

    String instanceId() {
        return instanceId;
    }

    private EngineGrpc.EngineBlockingStub call() {
        return stub.withDeadlineAfter(options.rpcTimeout().toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Opens the instance's Session stream, as the connector's scheduler does: when this process dies the stream breaks
     * and the server ends the instance, releasing its mappings and lane threads (the soak kills clients on purpose).
     */
    private void openSession() {
        ClientCall<SessionRequest, SessionEvent> call =
                channel.newCall(EngineGrpc.getSessionMethod(), CallOptions.DEFAULT);
        ClientCalls.asyncServerStreamingCall(
                call,
                SessionRequest.newBuilder()
                        .setInstanceId(instanceId)
                        .setNamespace(options.namespace())
                        .setTpSize(1)
                        .setWorldSize(1)
                        .build(),
                new StreamObserver<SessionEvent>() {
                    @Override
                    public void onNext(SessionEvent event) {}

                    @Override
                    public void onError(Throwable t) {}

                    @Override
                    public void onCompleted() {}
                });
        session = call;
    }

    /** RegisterContextBatch with every layer. */
    void register() {
        if (session == null) {
            openSession();
        }
        RegisterContextRequest.Builder r = RegisterContextRequest.newBuilder()
                .setInstanceId(instanceId)
                .setNamespace(options.namespace())
                .setTpRank(0)
                .setTpSize(1)
                .setWorldSize(1)
                .setDeviceId(0)
                .setNumLayers(layers)
                .setPpRank(0);
        for (int l = 0; l < layers; l++) {
            r.addLayerNames(layerNames.get(l))
                    .addWrapperBytes(ByteString.copyFrom(device.descriptor(l * layerStride, deviceBlocks * blockBytes)))
                    .addNumBlocks(deviceBlocks)
                    .addBytesPerBlock(blockBytes)
                    .addKvStrideBytes(0)
                    .addSegments(1);
        }
        call().registerContextBatch(r.build());
    }

    void unregister() {
        call().unregisterContext(
                        UnregisterRequest.newBuilder().setInstanceId(instanceId).build());
    }

    /** Runs one operation on prefix {@code k}; failures are counted, never thrown. */
    void run(OpMix.Op op, int k, long intendedStartNanos) {
        try {
            switch (op) {
                case SAVE -> save(k, 0, prefixes.length());
                case QUERY -> {
                    QueryReady ready = query(k);
                    if (ready.getNumHitBlocks() > 0) {
                        release(ready.getLease());
                    }
                }
                case LOAD -> {
                    QueryReady ready = query(k);
                    if (ready.getNumHitBlocks() > 0) {
                        load(k, (int) ready.getNumHitBlocks(), ready.getLease());
                    }
                }
                case REQUEST -> {
                    QueryReady ready = query(k);
                    int hits = (int) ready.getNumHitBlocks();
                    if (hits > 0) {
                        load(k, hits, ready.getLease());
                    }
                    if (hits < prefixes.length()) {
                        save(k, hits, prefixes.length());
                    }
                }
            }
            stats.op(op, System.nanoTime() - intendedStartNanos);
            backoffNanos = 0;
        } catch (StatusRuntimeException e) {
            stats.error(op.label() + ": " + e.getStatus().getCode() + " "
                    + e.getStatus().getDescription());
            if (e.getStatus().getCode() == Status.Code.UNAVAILABLE) {
                backOff();
            }
        } catch (RuntimeException e) {
            stats.error(op.label() + ": " + e);
        }
    }

    /**
     * Waits before the next operation after an UNAVAILABLE answer: 10 ms, doubling to 1 s while the server stays
     * unavailable, so a stopped server gets a few calls a second per worker instead of a tight loop of failures.
     */
    private void backOff() {
        backoffNanos = backoffNanos == 0 ? MIN_BACKOFF_NANOS : Math.min(MAX_BACKOFF_NANOS, backoffNanos * 2);
        stats.unavailable.increment();
        stats.backoffNanos.add(backoffNanos);
        LockSupport.parkNanos(backoffNanos);
    }

    /** QueryPrefetch of the whole prefix; retries while the server answers Loading (a slower tier is fetching). */
    QueryReady query(int k) {
        requestCounter++;
        QueryRequest request = QueryRequest.newBuilder()
                .setInstanceId(instanceId)
                .addAllBlockHashes(prefixes.hashes(k))
                .setReqId(instanceId + "-" + requestCounter)
                .build();
        long deadline = System.nanoTime() + options.rpcTimeout().toNanos();
        for (; ; ) {
            long t0 = System.nanoTime();
            QueryResponse response = call().queryPrefetch(request);
            stats.rpc(Stats.Rpc.QUERY, System.nanoTime() - t0);
            if (response.hasReady()) {
                QueryReady ready = response.getReady();
                stats.add(stats.queriedBlocks, prefixes.length());
                stats.add(stats.hitBlocks, ready.getNumHitBlocks());
                return ready;
            }
            stats.loadingPolls.increment();
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("query still loading after " + options.rpcTimeout());
            }
            LockSupport.parkNanos(1_000_000);
        }
    }

    void release(ByteString lease) {
        long t0 = System.nanoTime();
        call().release(ReleaseRequest.newBuilder().setLease(lease).build());
        stats.rpc(Stats.Rpc.RELEASE, System.nanoTime() - t0);
    }

    /** Fills device blocks {@code from..to-1} with prefix k's content and saves them in every layer. */
    void save(int k, int from, int to) {
        for (int l = 0; l < layers; l++) {
            for (int j = from; j < to; j++) {
                BlockContent.fill(
                        blockAddress(l, j), blockBytes, prefixes.content().contentBase(k, j, l));
            }
        }
        List<ByteString> hashes = prefixes.hashes(k).subList(from, to);
        List<Integer> ids = new ArrayList<>(to - from);
        for (int j = from; j < to; j++) {
            ids.add(j);
        }
        SaveRequest.Builder r = SaveRequest.newBuilder()
                .setInstanceId(instanceId)
                .setTpRank(0)
                .setDeviceId(0)
                .setPpRank(0);
        for (String layer : layerNames) {
            r.addSaves(SaveLayer.newBuilder()
                    .setLayerName(layer)
                    .addAllBlockIds(ids)
                    .addAllBlockHashes(hashes));
        }
        SaveRequest request = r.build();
        long t0 = System.nanoTime();
        call().save(request);
        stats.rpc(Stats.Rpc.SAVE, System.nanoTime() - t0);
        stats.add(stats.savedBlocks, to - from);
        stats.add(stats.savedBytes, (to - from) * blockBytes * layers);
    }

    /** Loads the first {@code hits} blocks of prefix k into device blocks 0..hits-1, waits, and verifies them. */
    void load(int k, int hits, ByteString lease) {
        if (options.verify()) {
            for (int l = 0; l < layers; l++) {
                // OFF-HEAP: blocks 0..hits-1 of layer l lie inside this worker's device object.
                Posix.memset(blockAddress(l, 0), (int) POISON, hits * blockBytes);
            }
        }
        List<Integer> ids = new ArrayList<>(hits);
        for (int j = 0; j < hits; j++) {
            ids.add(j);
        }
        try (LoadStateShm state = LoadStateShm.create()) {
            LoadRequest request = LoadRequest.newBuilder()
                    .setInstanceId(instanceId)
                    .setTpRank(0)
                    .setDeviceId(0)
                    .setLoadStateShm(state.name())
                    .addAllLayerNames(layerNames)
                    .addLoads(LeaseLoad.newBuilder().setLease(lease).addAllBlockIds(ids))
                    .build();
            long t0 = System.nanoTime();
            call().load(request);
            long t1 = System.nanoTime();
            stats.rpc(Stats.Rpc.LOAD, t1 - t0);
            long result = awaitState(state, options.loadTimeout());
            stats.rpc(Stats.Rpc.LOAD_DONE, System.nanoTime() - t0);
            if (result != LoadStateShm.SUCCESS) {
                throw new IllegalStateException("load state " + state.name() + " ended with " + result);
            }
        }
        stats.add(stats.loadedBlocks, hits);
        stats.add(stats.loadedBytes, hits * blockBytes * layers);
        if (options.verify()) {
            verify(k, hits);
        }
    }

    private void verify(int k, int hits) {
        for (int l = 0; l < layers; l++) {
            for (int j = 0; j < hits; j++) {
                long bad = BlockContent.firstMismatch(
                        blockAddress(l, j), blockBytes, prefixes.content().contentBase(k, j, l));
                if (bad >= 0) {
                    stats.add(stats.verifyFailures, 1);
                    throw new IllegalStateException("verify: prefix " + k + " block " + j + " layer " + l
                            + " differs at byte " + bad + " after Load");
                }
            }
        }
        stats.add(stats.verifiedBlocks, hits);
    }

    /**
     * Polls the load state with a park that doubles from 20 µs to 1 ms: small loads are seen within tens of
     * microseconds, while a long copy is polled gently (a waiter waking every few microseconds measurably slows the
     * server's memcpy when both share a small machine).
     */
    static long awaitState(LoadStateShm state, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long park = 20_000;
        for (; ; ) {
            long s = state.state();
            if (s != LoadStateShm.PENDING) {
                return s;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("load state " + state.name() + " still pending after " + timeout);
            }
            LockSupport.parkNanos(park);
            park = Math.min(1_000_000, park * 2);
        }
    }

    long blockAddress(int layer, int block) {
        return device.address() + layer * layerStride + block * blockBytes;
    }

    ShmDeviceMemory device() {
        return device;
    }

    ManagedChannel channel() {
        return channel;
    }

    @Override
    public void close() {
        ClientCall<SessionRequest, SessionEvent> open = session;
        if (open != null) {
            open.cancel("worker closed", null);
        }
        device.close();
    }
}
