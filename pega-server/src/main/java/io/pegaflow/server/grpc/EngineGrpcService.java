package io.pegaflow.server.grpc;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.pegaflow.core.engine.LayerSave;
import io.pegaflow.core.engine.LeaseLoad;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.engine.QueryOutcome;
import io.pegaflow.core.engine.RegisterCommand;
import io.pegaflow.proto.*;
import io.pegaflow.server.config.PegaProperties;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ApplicationContext;
import org.springframework.stereotype.Service;

/**
 * {@code pegaflow.Engine} over gRPC, wire-compatible with the reference connector. Translates and delegates: every
 * rule lives in the engine. Successful replies always carry {@code status{ok:true}} because the client requires the
 * field; failures are gRPC statuses with the reference's texts.
 */
@Service
public class EngineGrpcService extends EngineGrpc.EngineImplBase {
    private static final Logger LOG = LoggerFactory.getLogger(EngineGrpcService.class);
    private static final ResponseStatus OK =
            ResponseStatus.newBuilder().setOk(true).build();
    private static final String RDMA_OFF = "RDMA transfer engine is not configured";

    private final PegaEngine engine;
    private final RpcMetrics metrics;
    private final PegaProperties properties;
    private final ApplicationContext context;

    public EngineGrpcService(
            PegaEngine engine, RpcMetrics metrics, PegaProperties properties, ApplicationContext context) {
        this.engine = engine;
        this.metrics = metrics;
        this.properties = properties;
        this.context = context;
    }

    private <T> void unary(String method, StreamObserver<T> out, Supplier<T> body) {
        long started = System.nanoTime();
        T reply;
        try {
            reply = body.get();
        } catch (RuntimeException e) {
            metrics.record(method, GrpcErrors.statusLabel(e), System.nanoTime() - started);
            if (!(e instanceof io.pegaflow.core.error.EngineException)) {
                LOG.error("{} failed unexpectedly", method, e);
            }
            out.onError(GrpcErrors.toStatus(e));
            return;
        }
        metrics.record(method, "ok", System.nanoTime() - started);
        out.onNext(reply);
        out.onCompleted();
    }

    @Override
    public void registerContextBatch(RegisterContextRequest r, StreamObserver<RegisterContextResponse> out) {
        unary("register_context_batch", out, () -> {
            List<byte[]> wrappers = new ArrayList<>(r.getWrapperBytesCount());
            for (ByteString b : r.getWrapperBytesList()) {
                wrappers.add(b.toByteArray());
            }
            engine.registerContextBatch(new RegisterCommand(
                    r.getInstanceId(),
                    r.getNamespace(),
                    Integer.toUnsignedLong(r.getTpRank()),
                    Integer.toUnsignedLong(r.getTpSize()),
                    Integer.toUnsignedLong(r.getWorldSize()),
                    r.getDeviceId(),
                    Integer.toUnsignedLong(r.getNumLayers()),
                    Integer.toUnsignedLong(r.getPpRank()),
                    List.copyOf(r.getLayerNamesList()),
                    wrappers,
                    longs(r.getNumBlocksList()),
                    longs(r.getBytesPerBlockList()),
                    longs(r.getKvStrideBytesList()),
                    unsigned(r.getSegmentsList())));
            return RegisterContextResponse.newBuilder().setStatus(OK).build();
        });
    }

    @Override
    public void save(SaveRequest r, StreamObserver<SaveResponse> out) {
        unary("save", out, () -> {
            List<LayerSave> saves = new ArrayList<>(r.getSavesCount());
            for (SaveLayer layer : r.getSavesList()) {
                saves.add(new LayerSave(
                        layer.getLayerName(), ints(layer.getBlockIdsList()), bytes(layer.getBlockHashesList())));
            }
            engine.save(
                    r.getInstanceId(),
                    Integer.toUnsignedLong(r.getTpRank()),
                    Integer.toUnsignedLong(r.getPpRank()),
                    r.getDeviceId(),
                    saves);
            return SaveResponse.newBuilder().setStatus(OK).build();
        });
    }

    @Override
    public void load(LoadRequest r, StreamObserver<LoadResponse> out) {
        unary("load", out, () -> {
            List<LeaseLoad> loads = new ArrayList<>(r.getLoadsCount());
            for (io.pegaflow.proto.LeaseLoad l : r.getLoadsList()) {
                loads.add(new LeaseLoad(l.getLease().toByteArray(), ints(l.getBlockIdsList())));
            }
            engine.load(
                    r.getInstanceId(),
                    Integer.toUnsignedLong(r.getTpRank()),
                    r.getDeviceId(),
                    r.getLoadStateShm(),
                    List.copyOf(r.getLayerNamesList()),
                    loads);
            return LoadResponse.newBuilder().setStatus(OK).build();
        });
    }

    @Override
    public void queryPrefetch(QueryRequest r, StreamObserver<QueryResponse> out) {
        unary("query_prefetch", out, () -> {
            QueryOutcome o = engine.queryPrefetch(r.getInstanceId(), bytes(r.getBlockHashesList()), r.getReqId());
            if (o.loading()) {
                return QueryResponse.newBuilder()
                        .setLoading(QueryLoading.getDefaultInstance())
                        .build();
            }
            return QueryResponse.newBuilder()
                    .setReady(QueryReady.newBuilder()
                            .setNumHitBlocks(o.hitBlocks())
                            .setLease(ByteString.copyFrom(o.lease())))
                    .build();
        });
    }

    @Override
    public void release(ReleaseRequest r, StreamObserver<ReleaseResponse> out) {
        unary("release", out, () -> {
            engine.release(r.getLease().toByteArray());
            return ReleaseResponse.getDefaultInstance();
        });
    }

    @Override
    public void unregisterContext(UnregisterRequest r, StreamObserver<UnregisterResponse> out) {
        unary("unregister_context", out, () -> {
            engine.unregister(r.getInstanceId());
            return UnregisterResponse.newBuilder().setStatus(OK).build();
        });
    }

    @Override
    public void queryBlocksForTransfer(
            QueryBlocksForTransferRequest r, StreamObserver<QueryBlocksForTransferResponse> out) {
        unary("query_blocks_for_transfer", out, () -> {
            throw io.pegaflow.core.error.EngineException.failedPrecondition(RDMA_OFF);
        });
    }

    @Override
    public void releaseTransferLock(ReleaseTransferLockRequest r, StreamObserver<ReleaseTransferLockResponse> out) {
        unary("release_transfer_lock", out, () -> {
            throw io.pegaflow.core.error.EngineException.failedPrecondition(RDMA_OFF);
        });
    }

    @Override
    public void rdmaHandshake(RdmaHandshakeRequest r, StreamObserver<RdmaHandshakeResponse> out) {
        unary("rdma_handshake", out, () -> {
            throw io.pegaflow.core.error.EngineException.failedPrecondition(RDMA_OFF);
        });
    }

    @Override
    public void health(HealthRequest r, StreamObserver<HealthResponse> out) {
        unary("health", out, () -> HealthResponse.newBuilder().setStatus(OK).build());
    }

    @Override
    public void shutdown(ShutdownRequest r, StreamObserver<ShutdownResponse> out) {
        boolean loopback = Boolean.TRUE.equals(CallerContext.LOOPBACK.get());
        String token = properties.admin().token();
        if (!loopback && (token.isEmpty() || !token.equals(CallerContext.TOKEN.get()))) {
            metrics.record("shutdown", "PERMISSION_DENIED", 0);
            out.onError(Status.PERMISSION_DENIED
                    .withDescription("Shutdown from a remote caller needs 'authorization: Bearer <pega.admin.token>'")
                    .asRuntimeException());
            return;
        }
        unary("shutdown", out, () -> ShutdownResponse.newBuilder().setStatus(OK).build());
        Thread stopper = new Thread(
                () -> {
                    LOG.info("Shutdown RPC received: stopping");
                    System.exit(SpringApplication.exit(context, () -> 0));
                },
                "pega-shutdown");
        stopper.setDaemon(false);
        stopper.start();
    }

    @Override
    public void session(SessionRequest r, StreamObserver<SessionEvent> out) {
        long token;
        try {
            token = engine.openSession(
                    r.getInstanceId(),
                    r.getNamespace(),
                    Integer.toUnsignedLong(r.getTpSize()),
                    Integer.toUnsignedLong(r.getWorldSize()));
        } catch (RuntimeException e) {
            out.onError(GrpcErrors.toStatus(e));
            return;
        }
        String instanceId = r.getInstanceId();
        // The stream never yields; its end (client death, cancel, GOAWAY) is the liveness signal.
        ((ServerCallStreamObserver<SessionEvent>) out).setOnCancelHandler(() -> {
            try {
                engine.closeSession(instanceId, token);
            } catch (RuntimeException e) {
                LOG.warn("session cleanup of {} failed: {}", instanceId, e.toString());
            }
        });
    }

    private static long[] longs(List<Long> values) {
        long[] out = new long[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = values.get(i);
        }
        return out;
    }

    private static long[] unsigned(List<Integer> values) {
        long[] out = new long[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = Integer.toUnsignedLong(values.get(i));
        }
        return out;
    }

    private static int[] ints(List<Integer> values) {
        int[] out = new int[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = values.get(i);
        }
        return out;
    }

    private static List<byte[]> bytes(List<ByteString> values) {
        List<byte[]> out = new ArrayList<>(values.size());
        for (ByteString b : values) {
            out.add(b.toByteArray());
        }
        return out;
    }
}
