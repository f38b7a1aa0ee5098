package io.pegaflow.testkit;

import com.google.protobuf.ByteString;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.pegaflow.proto.ext.push.CancelReceiveRequest;
import io.pegaflow.proto.ext.push.PdPushGrpc;
import io.pegaflow.proto.ext.push.PrepareReceiveRequest;
import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.proto.ext.push.PushLayer;
import io.pegaflow.proto.ext.push.RegisterPushLayersRequest;
import io.pegaflow.proto.ext.push.StartPushRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A worker's side of {@code pegaflow.ext.PdPush} (docs/pd-push.md), for tests and tools: register a rank's layers,
 * prepare a receive (decode), start a push (prefill). The Python twin is {@code python/pegaflow_jvm_push}.
 *
 * <p>Every call has the client's deadline. Owns its channel when built with {@link #connect}.
 */
public final class PushClient implements AutoCloseable {
    private final ManagedChannel channel;
    private final boolean ownsChannel;
    private final Duration rpcTimeout;

    private PushClient(ManagedChannel channel, boolean ownsChannel, Duration rpcTimeout) {
        this.channel = channel;
        this.ownsChannel = ownsChannel;
        this.rpcTimeout = rpcTimeout;
    }

    /** A client with its own plaintext channel to {@code host:port}. */
    public static PushClient connect(String host, int port, Duration rpcTimeout) {
        return new PushClient(TestkitChannels.openWatching(host, port), true, rpcTimeout);
    }

    private PdPushGrpc.PdPushBlockingStub stub() {
        return PdPushGrpc.newBlockingStub(channel).withDeadlineAfter(rpcTimeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** RegisterPushLayers for the layers of a mock worker (same descriptors and layout as its RegisterContext). */
    public int registerLayers(MockVllmWorker worker) {
        List<PushLayer> layers = new ArrayList<>();
        for (LayerRegion r : worker.layers()) {
            KvLayout l = r.layout();
            layers.add(PushLayer.newBuilder()
                    .setName(r.name())
                    .setWrapperBytes(ByteString.copyFrom(r.descriptor()))
                    .setNumBlocks(l.numBlocks())
                    .setBytesPerBlock(l.bytesPerBlock())
                    .setKvStrideBytes(l.kvStrideBytes())
                    .setSegments(l.segments())
                    .build());
        }
        return stub().registerPushLayers(RegisterPushLayersRequest.newBuilder()
                        .setInstanceId(worker.instanceId())
                        .setTpRank(worker.tpRank())
                        .setTpSize(worker.tpSize())
                        .setDeviceId(worker.deviceId())
                        .addAllLayers(layers)
                        .build())
                .getLayers();
    }

    /** PrepareReceive: the handshake blob and receive id. */
    public PrepareReceiveResponse prepareReceive(
            String instanceId, String requestId, List<Long> blockIds, List<String> loadStateShm, Duration timeout) {
        return stub().prepareReceive(PrepareReceiveRequest.newBuilder()
                .setInstanceId(instanceId)
                .setRequestId(requestId)
                .addAllBlockIds(blockIds)
                .addAllLoadStateShm(loadStateShm)
                .setTimeoutMs(timeout.toMillis())
                .build());
    }

    public void cancelReceive(long receiveId) {
        stub().cancelReceive(CancelReceiveRequest.newBuilder()
                .setReceiveId(receiveId)
                .build());
    }

    /** StartPush: returns the push id. */
    public long startPush(
            String instanceId,
            int tpRank,
            String requestId,
            ByteString handshake,
            List<Long> blockIds,
            LayerReadyShm ready,
            LoadStateShm pushState,
            Duration timeout) {
        return stub().startPush(StartPushRequest.newBuilder()
                        .setInstanceId(instanceId)
                        .setTpRank(tpRank)
                        .setRequestId(requestId)
                        .setHandshake(handshake)
                        .addAllBlockIds(blockIds)
                        .setLayerReadyShm(ready.name())
                        .setPushStateShm(pushState.name())
                        .setTimeoutMs(timeout.toMillis())
                        .build())
                .getPushId();
    }

    /** How a worker's wait for its load_state (or push_state) object ended. */
    public enum Verdict {
        DONE,
        FAILED,
        /** The server that would write the object cannot be reached: it died, and nothing will ever write it. */
        SERVER_GONE,
        TIMED_OUT
    }

    private static final long LIVENESS_NANOS = 500_000_000L;
    private static final Duration CONNECT = Duration.ofSeconds(1);

    /**
     * Waits for {@code state}'s verdict as a decode worker should: polling the object, and every half second, while it
     * is pending, checking that this client's server is still there (the Python client's {@code PushClient.wait}).
     */
    public Verdict awaitVerdict(LoadStateShm state, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long nextCheck = System.nanoTime() + LIVENESS_NANOS;
        while (true) {
            long s = state.state();
            if (s != LoadStateShm.PENDING) {
                return s == LoadStateShm.SUCCESS ? Verdict.DONE : Verdict.FAILED;
            }
            long now = System.nanoTime();
            if (now - deadline >= 0) {
                return Verdict.TIMED_OUT;
            }
            if (now - nextCheck >= 0) {
                if (!serverAlive(CONNECT)) {
                    s = state.state(); // written just before the server went?
                    if (s == LoadStateShm.PENDING) {
                        return Verdict.SERVER_GONE;
                    }
                    continue;
                }
                nextCheck = System.nanoTime() + LIVENESS_NANOS;
            }
            LockSupport.parkNanos(200_000);
        }
    }

    /**
     * Whether the server can be reached: a connected channel is; otherwise it must connect within {@code timeout}. A
     * server that exits or is killed closes its sockets, so the channel leaves READY at once and cannot reconnect.
     */
    public boolean serverAlive(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        ConnectivityState s = channel.getState(true);
        while (s != ConnectivityState.READY) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            CountDownLatch changed = new CountDownLatch(1);
            channel.notifyWhenStateChanged(s, changed::countDown);
            try {
                changed.await(left, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            s = channel.getState(true);
        }
        return true;
    }

    @Override
    public void close() {
        if (ownsChannel) {
            channel.shutdownNow();
            try {
                channel.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
