package io.pegaflow.push.grpc;

import com.google.protobuf.ByteString;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.pegaflow.core.device.Caller;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.proto.ext.push.CancelReceiveRequest;
import io.pegaflow.proto.ext.push.CancelReceiveResponse;
import io.pegaflow.proto.ext.push.LayerArrivedRequest;
import io.pegaflow.proto.ext.push.LayerArrivedResponse;
import io.pegaflow.proto.ext.push.LayerReadyAck;
import io.pegaflow.proto.ext.push.LayerReadyEvent;
import io.pegaflow.proto.ext.push.PdPushGrpc;
import io.pegaflow.proto.ext.push.PrepareReceiveRequest;
import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.proto.ext.push.PushFailedRequest;
import io.pegaflow.proto.ext.push.PushFailedResponse;
import io.pegaflow.proto.ext.push.RegisterPushLayersRequest;
import io.pegaflow.proto.ext.push.RegisterPushLayersResponse;
import io.pegaflow.proto.ext.push.StartPushRequest;
import io.pegaflow.proto.ext.push.StartPushResponse;
import io.pegaflow.proto.ext.push.WatchReceiveEvent;
import io.pegaflow.proto.ext.push.WatchReceiveRequest;
import io.pegaflow.push.PushEngine;
import io.pegaflow.push.decode.DecodeSide;
import io.pegaflow.push.decode.ReceiveWatcher;

/**
 * {@code pegaflow.ext.PdPush} over the {@link PushEngine}: it translates and delegates, nothing more. An error leaves
 * the method as thrown and the app's edge chain maps it as it maps every engine RPC's (decision 0007): an
 * {@link EngineException} becomes its gRPC status with the engine's message as the description, an INTERNAL one is
 * logged once with its cause, and anything else is INTERNAL {@code "internal error"}, its cause in the log only.
 */
public final class PdPushGrpcService extends PdPushGrpc.PdPushImplBase {
    private final PushEngine engine;
    private final CallerUid callerUid;

    public PdPushGrpcService(PushEngine engine, CallerUid callerUid) {
        this.engine = engine;
        this.callerUid = callerUid;
    }

    @Override
    public void registerPushLayers(RegisterPushLayersRequest r, StreamObserver<RegisterPushLayersResponse> out) {
        int n = engine.registerLayers(
                new Caller(r.getInstanceId(), callerUid.current()),
                callerUid.principal(),
                r.getInstanceId(),
                r.getTpRank(),
                r.getTpSize(),
                r.getDeviceId(),
                PushWire.layers(r.getLayersList()));
        reply(out, RegisterPushLayersResponse.newBuilder().setLayers(n).build());
    }

    @Override
    public void prepareReceive(PrepareReceiveRequest r, StreamObserver<PrepareReceiveResponse> out) {
        DecodeSide.Prepared p = engine.prepareReceive(
                callerUid.principal(),
                callerUid.current(),
                r.getInstanceId(),
                r.getRequestId(),
                r.getBlockIdsList(),
                r.getLoadStateShmList(),
                r.getTimeoutMs());
        reply(
                out,
                PrepareReceiveResponse.newBuilder()
                        .setReceiveId(p.receiveId())
                        .setHandshake(ByteString.copyFrom(p.handshake()))
                        .build());
    }

    @Override
    public void cancelReceive(CancelReceiveRequest r, StreamObserver<CancelReceiveResponse> out) {
        engine.cancelReceive(callerUid.principal(), r.getReceiveId());
        reply(out, CancelReceiveResponse.getDefaultInstance());
    }

    @Override
    public void startPush(StartPushRequest r, StreamObserver<StartPushResponse> out) {
        long id = engine.startPush(
                callerUid.principal(),
                callerUid.current(),
                r.getInstanceId(),
                r.getTpRank(),
                r.getRequestId(),
                r.getHandshake().toByteArray(),
                r.getBlockIdsList(),
                r.getLayerReadyShm(),
                r.getPushStateShm(),
                r.getTimeoutMs());
        reply(out, StartPushResponse.newBuilder().setPushId(id).build());
    }

    @Override
    public void layerArrived(LayerArrivedRequest r, StreamObserver<LayerArrivedResponse> out) {
        engine.layerArrived(r.getReceiveId(), r.getReceiveSecret().toByteArray(), r.getTpRank(), r.getLayer());
        reply(out, LayerArrivedResponse.getDefaultInstance());
    }

    @Override
    public void pushFailed(PushFailedRequest r, StreamObserver<PushFailedResponse> out) {
        engine.pushFailed(r.getReceiveId(), r.getReceiveSecret().toByteArray(), r.getTpRank(), r.getReason());
        reply(out, PushFailedResponse.getDefaultInstance());
    }

    /**
     * Held open by a prefill server while it pushes; answered with the receive's outcome. When the caller's side of
     * the stream goes away first (its process died and its sockets closed, or it cancelled), the decode side is told.
     */
    @Override
    public void watchReceive(WatchReceiveRequest r, StreamObserver<WatchReceiveEvent> out) {
        ServerCallStreamObserver<WatchReceiveEvent> call = (ServerCallStreamObserver<WatchReceiveEvent>) out;
        StreamWatcher watcher = new StreamWatcher(call);
        byte[] secret = r.getReceiveSecret().toByteArray();
        call.setOnCancelHandler(() -> {
            if (watcher.cancelled()) {
                engine.watchLost(r.getReceiveId(), secret, r.getTpRank());
            }
        });
        try {
            engine.watchReceive(r.getReceiveId(), secret, r.getTpRank(), watcher);
        } catch (RuntimeException e) {
            watcher.refused(); // the edge chain closes the stream with the error's status; no watch to lose
            throw e;
        }
    }

    /** Answers a WatchReceive stream once, from whichever thread sees the end first. */
    private static final class StreamWatcher implements ReceiveWatcher {
        private final ServerCallStreamObserver<WatchReceiveEvent> call;
        private boolean done;

        StreamWatcher(ServerCallStreamObserver<WatchReceiveEvent> call) {
            this.call = call;
        }

        @Override
        public synchronized void ended(boolean succeeded, String reason) {
            if (done) {
                return;
            }
            done = true;
            try {
                call.onNext(WatchReceiveEvent.newBuilder()
                        .setState(succeeded ? 1 : -1)
                        .setReason(reason)
                        .build());
                call.onCompleted();
            } catch (IllegalStateException | io.grpc.StatusRuntimeException e) {
                // the stream was cancelled meanwhile: nobody is listening
            }
        }

        synchronized void refused() {
            done = true;
        }

        /** Whether the stream was cancelled before it was answered (the caller went away). */
        synchronized boolean cancelled() {
            boolean early = !done;
            done = true;
            return early;
        }
    }

    /**
     * The alternative signal path the design note measured: acknowledges every event with the count seen on this
     * stream. It drives nothing; pushes read their layer-ready objects.
     */
    @Override
    public StreamObserver<LayerReadyEvent> streamLayerReady(StreamObserver<LayerReadyAck> out) {
        return new StreamObserver<>() {
            private int seen;

            @Override
            public void onNext(LayerReadyEvent e) {
                seen++;
                out.onNext(LayerReadyAck.newBuilder().setLayers(seen).build());
            }

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {
                out.onCompleted();
            }
        };
    }

    private static <T> void reply(StreamObserver<T> out, T response) {
        out.onNext(response);
        out.onCompleted();
    }
}
