package io.pegaflow.push.grpc;

import io.grpc.Status;
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
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code pegaflow.ext.PdPush} over the {@link PushEngine}. The engine's {@link EngineException}s map to their gRPC
 * status here (so the service behaves the same with or without the server's exception handlers), with the engine's
 * message as the description; anything else is INTERNAL, logged once with its cause.
 */
public final class PdPushGrpcService extends PdPushGrpc.PdPushImplBase {
    private static final Logger LOG = LoggerFactory.getLogger(PdPushGrpcService.class);

    private final PushEngine engine;
    private final CallerUid callerUid;

    public PdPushGrpcService(PushEngine engine, CallerUid callerUid) {
        this.engine = engine;
        this.callerUid = callerUid;
    }

    @Override
    public void registerPushLayers(RegisterPushLayersRequest r, StreamObserver<RegisterPushLayersResponse> out) {
        call(out, () -> {
            int n = engine.registerLayers(
                    new Caller(r.getInstanceId(), callerUid.current()),
                    callerUid.principal(),
                    r.getInstanceId(),
                    r.getTpRank(),
                    r.getTpSize(),
                    r.getDeviceId(),
                    r.getLayersList());
            return RegisterPushLayersResponse.newBuilder().setLayers(n).build();
        });
    }

    @Override
    public void prepareReceive(PrepareReceiveRequest r, StreamObserver<PrepareReceiveResponse> out) {
        call(out, () -> {
            DecodeSide.Prepared p = engine.prepareReceive(
                    callerUid.principal(),
                    callerUid.current(),
                    r.getInstanceId(),
                    r.getRequestId(),
                    r.getBlockIdsList(),
                    r.getLoadStateShmList(),
                    r.getTimeoutMs());
            return PrepareReceiveResponse.newBuilder()
                    .setReceiveId(p.receiveId())
                    .setHandshake(p.handshake().toByteString())
                    .build();
        });
    }

    @Override
    public void cancelReceive(CancelReceiveRequest r, StreamObserver<CancelReceiveResponse> out) {
        call(out, () -> {
            engine.cancelReceive(callerUid.principal(), r.getReceiveId());
            return CancelReceiveResponse.getDefaultInstance();
        });
    }

    @Override
    public void startPush(StartPushRequest r, StreamObserver<StartPushResponse> out) {
        call(out, () -> {
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
            return StartPushResponse.newBuilder().setPushId(id).build();
        });
    }

    @Override
    public void layerArrived(LayerArrivedRequest r, StreamObserver<LayerArrivedResponse> out) {
        call(out, () -> {
            engine.layerArrived(r.getReceiveId(), r.getReceiveSecret().toByteArray(), r.getTpRank(), r.getLayer());
            return LayerArrivedResponse.getDefaultInstance();
        });
    }

    @Override
    public void pushFailed(PushFailedRequest r, StreamObserver<PushFailedResponse> out) {
        call(out, () -> {
            engine.pushFailed(r.getReceiveId(), r.getReceiveSecret().toByteArray(), r.getTpRank(), r.getReason());
            return PushFailedResponse.getDefaultInstance();
        });
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
        } catch (EngineException e) {
            watcher.refuse(status(e).withDescription(e.getMessage()));
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

        synchronized void refuse(Status status) {
            if (!done) {
                done = true;
                call.onError(status.asRuntimeException());
            }
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

    private static <T> void call(StreamObserver<T> out, Supplier<T> body) {
        T response;
        try {
            response = body.get();
        } catch (EngineException e) {
            out.onError(status(e).withDescription(e.getMessage()).asRuntimeException());
            return;
        } catch (RuntimeException e) {
            LOG.error("PdPush call failed", e);
            out.onError(Status.INTERNAL.withDescription(e.toString()).asRuntimeException());
            return;
        }
        out.onNext(response);
        out.onCompleted();
    }

    private static Status status(EngineException e) {
        return switch (e.kind()) {
            case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
            case FAILED_PRECONDITION -> Status.FAILED_PRECONDITION;
            case UNAVAILABLE -> Status.UNAVAILABLE;
            case DEADLINE_EXCEEDED -> Status.DEADLINE_EXCEEDED;
            case RESOURCE_EXHAUSTED -> Status.RESOURCE_EXHAUSTED;
            case PERMISSION_DENIED -> Status.PERMISSION_DENIED;
            case INTERNAL -> Status.INTERNAL;
        };
    }
}
