package io.pegaflow.testkit;

import com.google.protobuf.ByteString;
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
import java.util.concurrent.TimeUnit;

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
        return new PushClient(TestkitChannels.open(host, port), true, rpcTimeout);
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
