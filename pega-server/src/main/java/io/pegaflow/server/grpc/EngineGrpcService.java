package io.pegaflow.server.grpc;

import com.google.protobuf.ByteString;
import io.grpc.BindableService;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.engine.QueryOutcome;
import io.pegaflow.core.engine.RegisterCommand;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.Connector;
import io.pegaflow.core.instance.ConnectorGeneration;
import io.pegaflow.core.metrics.LoadPhase;
import io.pegaflow.core.metrics.PhaseRecorders;
import io.pegaflow.core.metrics.SavePhase;
import io.pegaflow.edge.access.AdminAccess;
import io.pegaflow.edge.lifecycle.ShutdownCoordinator;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.proto.HealthResponse;
import io.pegaflow.proto.LoadResponse;
import io.pegaflow.proto.QueryBlocksForTransferRequest;
import io.pegaflow.proto.QueryBlocksForTransferResponse;
import io.pegaflow.proto.QueryLoading;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.QueryRequest;
import io.pegaflow.proto.QueryResponse;
import io.pegaflow.proto.RdmaHandshakeRequest;
import io.pegaflow.proto.RdmaHandshakeResponse;
import io.pegaflow.proto.RegisterContextRequest;
import io.pegaflow.proto.RegisterContextResponse;
import io.pegaflow.proto.ReleaseRequest;
import io.pegaflow.proto.ReleaseResponse;
import io.pegaflow.proto.ReleaseTransferLockRequest;
import io.pegaflow.proto.ReleaseTransferLockResponse;
import io.pegaflow.proto.ResponseStatus;
import io.pegaflow.proto.SaveResponse;
import io.pegaflow.proto.SessionEvent;
import io.pegaflow.proto.SessionRequest;
import io.pegaflow.proto.ShutdownRequest;
import io.pegaflow.proto.ShutdownResponse;
import io.pegaflow.proto.UnregisterRequest;
import io.pegaflow.proto.UnregisterResponse;
import io.pegaflow.proto.compat.LoadRequestWire;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Service;

/**
 * {@code pegaflow.Engine} over gRPC, wire-compatible with the reference connector. Translates and delegates: every
 * rule lives in the engine, an engine error propagates out of the method and {@link EngineExceptionHandler} maps it to
 * its status once; the edge's interceptors count and time every call. Successful replies always carry
 * {@code status{ok:true}} because the client requires the field; failures are gRPC statuses with the reference's
 * texts.
 *
 * <p>Every instance-scoped call is bound to the {@link CallerIdentity} of the connection that registered the instance
 * (or opened its Session): another principal gets PERMISSION_DENIED before anything happens (decision 0011, defect 6).
 * Shutdown asks the one {@link AdminAccess} rule. Release and the transfer RPCs take a lease or lock handle that only
 * its holder was given. The transfer RPCs go to {@link TransferRpcs} when {@code pega.rdma.enabled=true}, and are
 * FAILED_PRECONDITION otherwise.
 */
@Service
class EngineGrpcService implements EngineGrpc.AsyncService, BindableService {
    private static final Logger LOG = LoggerFactory.getLogger(EngineGrpcService.class);
    private static final ResponseStatus OK =
            ResponseStatus.newBuilder().setOk(true).build();
    private static final String RDMA_OFF = "RDMA transfer engine is not configured";
    static final String SHUTDOWN_DENIED = "Shutdown needs 'authorization: Bearer <pega.admin.token>' unless the gRPC"
            + " listener is loopback-only (spring.grpc.server.host=127.0.0.1); with no pega.admin.token set it is"
            + " disabled on this listener";

    private final PegaEngine engine;
    private final ConnectorGate gate;
    private final AdminAccess access;
    private final ShutdownCoordinator shutdown;
    private final @Nullable TransferRpcs transfers; // null unless pega.rdma.enabled=true
    private final NanoClock clock = NanoClock.SYSTEM; // the phase timers' clock

    EngineGrpcService(
            PegaEngine engine,
            ConnectorGate gate,
            AdminAccess access,
            ShutdownCoordinator shutdown,
            ObjectProvider<TransferRpcs> transfers) {
        this.engine = engine;
        this.gate = gate;
        this.access = access;
        this.shutdown = shutdown;
        this.transfers = transfers.getIfAvailable();
    }

    private TransferRpcs transfers() {
        if (transfers == null) {
            throw EngineException.failedPrecondition(RDMA_OFF);
        }
        return transfers;
    }

    private static <T> void reply(StreamObserver<T> out, T response) {
        out.onNext(response);
        out.onCompleted();
    }

    /**
     * Load is bound to {@link #load(LoadRequestWire, StreamObserver)}: its fields are read by generation; Save to
     * {@link #save(SaveCall, StreamObserver)}, decoded straight into the engine's arrays. Save and Load
     * time their receive and parse phases ({@link PhaseTimedBinding}); the recorders are looked up per call, since the
     * meter binder may install them after this binding.
     */
    @Override
    public ServerServiceDefinition bindService() {
        return PhaseTimedBinding.wrap(
                SaveBinding.rebind(LoadBinding.rebind(EngineGrpc.bindService(this), this::load), this::save),
                clock,
                Map.of(
                        EngineGrpc.getSaveMethod().getFullMethodName(),
                        new PhaseTimedBinding.Timers(
                                nanos -> engine.savePhases()
                                        .of(SavePhase.RECEIVE)
                                        .recordNanos(nanos),
                                nanos -> engine.savePhases().of(SavePhase.PARSE).recordNanos(nanos)),
                        EngineGrpc.getLoadMethod().getFullMethodName(),
                        new PhaseTimedBinding.Timers(
                                nanos -> engine.loadPhases()
                                        .of(LoadPhase.RECEIVE)
                                        .recordNanos(nanos),
                                nanos -> engine.loadPhases().of(LoadPhase.PARSE).recordNanos(nanos))));
    }

    @Override
    public void registerContextBatch(RegisterContextRequest r, StreamObserver<RegisterContextResponse> out) {
        Connector connector = gate.admit(r);
        CallerIdentity caller = CallerIdentity.current();
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
                unsigned(r.getSegmentsList()),
                caller.uid(),
                caller.principal(),
                connector,
                r.getLayerGroupIdsList().stream().mapToInt(Integer::intValue).toArray()));
        gate.registered(connector);
        LOG.info(
                "instance {} registered device {} (tp rank {}/{}, {} layers, namespace {}, connector {} {})",
                r.getInstanceId(),
                r.getDeviceId(),
                Integer.toUnsignedLong(r.getTpRank()),
                Integer.toUnsignedLong(r.getTpSize()),
                r.getLayerNamesCount(),
                r.getNamespace(),
                connector.generation(),
                connector.versionText());
        reply(out, RegisterContextResponse.newBuilder().setStatus(OK).build());
    }

    /**
     * Save, bound to {@link SaveCall}: {@link SaveBinding} decoded the layers while parsing, so what is left before
     * the engine is the caller's authorization.
     */
    void save(SaveCall r, StreamObserver<SaveResponse> out) {
        long begun = clock.nanoTime();
        if (r.malformed() != null) {
            throw EngineException.invalidArgument(r.malformed());
        }
        engine.authorize(r.instanceId(), CallerIdentity.current().principal());
        PhaseRecorders<SavePhase> phases = engine.savePhases();
        phases.of(SavePhase.DECODE).recordNanos(clock.nanoTime() - begun);
        engine.save(
                r.instanceId(),
                Integer.toUnsignedLong(r.tpRank()),
                Integer.toUnsignedLong(r.ppRank()),
                r.deviceId(),
                r.layers());
        long saved = clock.nanoTime();
        reply(out, SaveResponse.newBuilder().setStatus(OK).build());
        phases.of(SavePhase.REPLY).recordNanos(clock.nanoTime() - saved);
    }

    /**
     * Load of every generation: fields 5 and 2 are decoded by the generation the instance registered with (an
     * instance that is not live decodes as v0.22.4, and the engine then reports it missing).
     */
    void load(LoadRequestWire r, StreamObserver<LoadResponse> out) {
        long begun = clock.nanoTime();
        engine.authorize(r.getInstanceId(), CallerIdentity.current().principal());
        Connector connector = engine.connectorOf(r.getInstanceId());
        ConnectorGeneration generation = connector == null ? ConnectorGeneration.G0 : connector.generation();
        long tpRank = Integer.toUnsignedLong(r.getTpRank());
        PhaseRecorders<LoadPhase> phases = engine.loadPhases();
        if (generation.groupedLoad()) {
            LoadWire.Grouped grouped = LoadWire.grouped(r);
            phases.of(LoadPhase.DECODE).recordNanos(clock.nanoTime() - begun);
            engine.loadGroups(
                    r.getInstanceId(), tpRank, r.getDeviceId(), r.getLoadStateShm(), grouped.groups(), grouped.loads());
        } else {
            LoadWire.Legacy legacy = LoadWire.legacy(r, generation);
            phases.of(LoadPhase.DECODE).recordNanos(clock.nanoTime() - begun);
            engine.load(
                    r.getInstanceId(),
                    tpRank,
                    r.getDeviceId(),
                    r.getLoadStateShm(),
                    legacy.layerNames(),
                    legacy.loads());
        }
        long loaded = clock.nanoTime();
        reply(out, LoadResponse.newBuilder().setStatus(OK).build());
        phases.of(LoadPhase.REPLY).recordNanos(clock.nanoTime() - loaded);
    }

    @Override
    public void queryPrefetch(QueryRequest r, StreamObserver<QueryResponse> out) {
        engine.authorize(r.getInstanceId(), CallerIdentity.current().principal());
        QueryOutcome o = engine.queryPrefetch(
                r.getInstanceId(),
                bytes(r.getBlockHashesList()),
                r.getReqId(),
                r.getGroupId(),
                r.getWaitForFullPrefix());
        if (o.loading()) {
            reply(
                    out,
                    QueryResponse.newBuilder()
                            .setLoading(QueryLoading.getDefaultInstance())
                            .build());
            return;
        }
        reply(
                out,
                QueryResponse.newBuilder()
                        .setReady(QueryReady.newBuilder()
                                .setNumHitBlocks(o.hitBlocks())
                                .setLease(ByteString.copyFrom(o.lease()))
                                .addAllHitPositions(
                                        IntStream.of(o.hitPositions()).boxed().toList()))
                        .build());
    }

    @Override
    public void release(ReleaseRequest r, StreamObserver<ReleaseResponse> out) {
        engine.release(r.getLease().toByteArray());
        reply(out, ReleaseResponse.getDefaultInstance());
    }

    @Override
    public void unregisterContext(UnregisterRequest r, StreamObserver<UnregisterResponse> out) {
        engine.unregister(r.getInstanceId(), CallerIdentity.current().principal());
        LOG.info("instance {} unregistered", r.getInstanceId());
        reply(out, UnregisterResponse.newBuilder().setStatus(OK).build());
    }

    @Override
    public void queryBlocksForTransfer(
            QueryBlocksForTransferRequest r, StreamObserver<QueryBlocksForTransferResponse> out) {
        reply(out, transfers().queryBlocks(r));
    }

    @Override
    public void releaseTransferLock(ReleaseTransferLockRequest r, StreamObserver<ReleaseTransferLockResponse> out) {
        reply(out, transfers().releaseLock(r));
    }

    @Override
    public void rdmaHandshake(RdmaHandshakeRequest r, StreamObserver<RdmaHandshakeResponse> out) {
        reply(out, transfers().handshake(r));
    }

    @Override
    public void health(HealthRequest r, StreamObserver<HealthResponse> out) {
        reply(out, HealthResponse.newBuilder().setStatus(OK).build());
    }

    /** Answers first, then stops the process through the coordinator (the reply leaves during graceful shutdown). */
    @Override
    public void shutdown(ShutdownRequest r, StreamObserver<ShutdownResponse> out) {
        if (!access.permitsCurrentGrpcCall()) {
            throw Status.PERMISSION_DENIED.withDescription(SHUTDOWN_DENIED).asRuntimeException();
        }
        reply(out, ShutdownResponse.newBuilder().setStatus(OK).build());
        LOG.info("Shutdown RPC received");
        shutdown.requestShutdown("Shutdown RPC");
    }

    @Override
    public void session(SessionRequest r, StreamObserver<SessionEvent> out) {
        long token = engine.openSession(
                r.getInstanceId(),
                r.getNamespace(),
                Integer.toUnsignedLong(r.getTpSize()),
                Integer.toUnsignedLong(r.getWorldSize()),
                CallerIdentity.current().principal());
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

    private static List<byte[]> bytes(List<ByteString> values) {
        List<byte[]> out = new ArrayList<>(values.size());
        for (ByteString b : values) {
            out.add(b.toByteArray());
        }
        return out;
    }
}
