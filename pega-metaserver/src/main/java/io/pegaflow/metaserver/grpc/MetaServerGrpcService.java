package io.pegaflow.metaserver.grpc;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.pegaflow.metaserver.config.MetaserverProperties;
import io.pegaflow.metaserver.index.MetaStore;
import io.pegaflow.metaserver.index.PrefixMatch;
import io.pegaflow.proto.HeartbeatNodeRequest;
import io.pegaflow.proto.HeartbeatNodeResponse;
import io.pegaflow.proto.InsertBlockHashesRequest;
import io.pegaflow.proto.InsertBlockHashesResponse;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.proto.NodePrefixResult;
import io.pegaflow.proto.QueryPrefixBlocksRequest;
import io.pegaflow.proto.QueryPrefixBlocksResponse;
import io.pegaflow.proto.RemoveBlockHashesRequest;
import io.pegaflow.proto.RemoveBlockHashesResponse;
import io.pegaflow.proto.ResponseStatus;
import io.pegaflow.proto.UnregisterNodeRequest;
import io.pegaflow.proto.UnregisterNodeResponse;
import java.util.List;
import java.util.UUID;
import java.util.function.BiFunction;
import org.springframework.stereotype.Service;

/**
 * {@code pegaflow.MetaServer}, wire-compatible with the reference (novitalabs/pegaflow v0.22.4): the same validation
 * order, status codes and message texts, including the quirk that an empty Insert or Remove returns gRPC OK with
 * {@code status.ok=false}. Validates and delegates to {@link MetaStore}: a validation failure or a lifecycle refusal
 * propagates out of the method and {@link MetaserverExceptionHandler} (or the edge's fallback) maps it; metrics and the
 * epoch header are added by the edge's interceptors.
 */
@Service
public class MetaServerGrpcService extends MetaServerGrpc.MetaServerImplBase {

    static final String EMPTY_HASHES = "block_hashes cannot be empty";

    private final MetaStore store;
    private final RequestValidator validator;
    private final long staleAfterSecs;

    public MetaServerGrpcService(MetaStore store, MetaserverProperties properties) {
        this.store = store;
        this.validator = new RequestValidator(properties);
        this.staleAfterSecs = properties.nodeStaleSecs();
    }

    @Override
    public void heartbeatNode(HeartbeatNodeRequest request, StreamObserver<HeartbeatNodeResponse> observer) {
        UUID nodeId = RequestValidator.nodeId(request.getNodeId());
        store.heartbeat(RequestValidator.node(request.getNode()), nodeId);
        reply(
                observer,
                HeartbeatNodeResponse.newBuilder()
                        .setStaleAfterSecs(staleAfterSecs)
                        .build());
    }

    @Override
    public void unregisterNode(UnregisterNodeRequest request, StreamObserver<UnregisterNodeResponse> observer) {
        UUID nodeId = RequestValidator.nodeId(request.getNodeId());
        long removed = store.unregister(RequestValidator.node(request.getNode()), nodeId);
        reply(
                observer,
                UnregisterNodeResponse.newBuilder().setRemovedOwners(removed).build());
    }

    @Override
    public void insertBlockHashes(
            InsertBlockHashesRequest request, StreamObserver<InsertBlockHashesResponse> observer) {
        reply(
                observer,
                ownedHashes(
                        request.getNamespace(),
                        request.getBlockHashesList(),
                        request.getNode(),
                        request.getNodeId(),
                        store::insert,
                        (status, count) -> InsertBlockHashesResponse.newBuilder()
                                .setStatus(status)
                                .setInsertedCount(count)
                                .build()));
    }

    @Override
    public void removeBlockHashes(
            RemoveBlockHashesRequest request, StreamObserver<RemoveBlockHashesResponse> observer) {
        reply(
                observer,
                ownedHashes(
                        request.getNamespace(),
                        request.getBlockHashesList(),
                        request.getNode(),
                        request.getNodeId(),
                        store::remove,
                        (status, count) -> RemoveBlockHashesResponse.newBuilder()
                                .setStatus(status)
                                .setRemovedCount(count)
                                .build()));
    }

    /** An owner's change to the index: Insert and Remove differ only in the store call and the reply type. */
    @FunctionalInterface
    private interface OwnerOp {
        int apply(String namespace, List<ByteString> hashes, String node, UUID nodeId);
    }

    private <T> T ownedHashes(
            String namespace,
            List<ByteString> hashes,
            String rawNode,
            String rawNodeId,
            OwnerOp op,
            BiFunction<ResponseStatus, Integer, T> response) {
        if (hashes.isEmpty()) {
            // Reference quirk, kept for wire compatibility: OK at the gRPC level, failure in the body.
            return response.apply(status(false, EMPTY_HASHES), 0);
        }
        UUID nodeId = RequestValidator.nodeId(rawNodeId);
        String node = RequestValidator.node(rawNode);
        validator.hashes(namespace, hashes);
        return response.apply(status(true, ""), op.apply(namespace, hashes, node, nodeId));
    }

    @Override
    public void queryPrefixBlocks(
            QueryPrefixBlocksRequest request, StreamObserver<QueryPrefixBlocksResponse> observer) {
        if (request.getBlockHashesCount() == 0) {
            throw Status.INVALID_ARGUMENT.withDescription(EMPTY_HASHES).asRuntimeException();
        }
        validator.hashes(request.getNamespace(), request.getBlockHashesList());
        List<PrefixMatch> matches = store.queryPrefix(request.getNamespace(), request.getBlockHashesList());
        QueryPrefixBlocksResponse.Builder response = QueryPrefixBlocksResponse.newBuilder();
        for (PrefixMatch match : matches) {
            response.addNodes(
                    NodePrefixResult.newBuilder().setNode(match.node()).setPrefixLen(match.prefixLen()));
        }
        reply(observer, response.build());
    }

    private static <T> void reply(StreamObserver<T> observer, T response) {
        observer.onNext(response);
        observer.onCompleted();
    }

    private static ResponseStatus status(boolean ok, String message) {
        return ResponseStatus.newBuilder().setOk(ok).setMessage(message).build();
    }
}
