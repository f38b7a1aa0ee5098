package io.pegaflow.metaserver.grpc;

import com.google.protobuf.ByteString;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.stub.StreamObserver;
import io.pegaflow.metaserver.config.MetaserverProperties;
import io.pegaflow.metaserver.index.MetaStore;
import io.pegaflow.metaserver.index.PrefixMatch;
import io.pegaflow.metaserver.node.SessionRejectedException;
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
import io.pegaflow.proto.ext.MetaserverMetadata;
import java.util.List;
import java.util.UUID;
import java.util.function.BiFunction;
import org.springframework.stereotype.Service;

/**
 * {@code pegaflow.MetaServer}, wire-compatible with the reference (spec/cluster.md §1.2): the same validation order,
 * status codes and message texts, including the quirk that an empty Insert or Remove returns gRPC OK with
 * {@code status.ok=false}. Validates and delegates to {@link MetaStore}; metrics and the epoch header are added by
 * interceptors.
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
        handle(observer, () -> {
            UUID nodeId = RequestValidator.nodeId(request.getNodeId());
            store.heartbeat(RequestValidator.node(request.getNode()), nodeId);
            return HeartbeatNodeResponse.newBuilder()
                    .setStaleAfterSecs(staleAfterSecs)
                    .build();
        });
    }

    @Override
    public void unregisterNode(UnregisterNodeRequest request, StreamObserver<UnregisterNodeResponse> observer) {
        handle(observer, () -> {
            UUID nodeId = RequestValidator.nodeId(request.getNodeId());
            long removed = store.unregister(RequestValidator.node(request.getNode()), nodeId);
            return UnregisterNodeResponse.newBuilder().setRemovedOwners(removed).build();
        });
    }

    @Override
    public void insertBlockHashes(
            InsertBlockHashesRequest request, StreamObserver<InsertBlockHashesResponse> observer) {
        ownedHashes(
                observer,
                request.getNamespace(),
                request.getBlockHashesList(),
                request.getNode(),
                request.getNodeId(),
                store::insert,
                (status, count) -> InsertBlockHashesResponse.newBuilder()
                        .setStatus(status)
                        .setInsertedCount(count)
                        .build());
    }

    @Override
    public void removeBlockHashes(
            RemoveBlockHashesRequest request, StreamObserver<RemoveBlockHashesResponse> observer) {
        ownedHashes(
                observer,
                request.getNamespace(),
                request.getBlockHashesList(),
                request.getNode(),
                request.getNodeId(),
                store::remove,
                (status, count) -> RemoveBlockHashesResponse.newBuilder()
                        .setStatus(status)
                        .setRemovedCount(count)
                        .build());
    }

    /** An owner's change to the index: Insert and Remove differ only in the store call and the reply type. */
    @FunctionalInterface
    private interface OwnerOp {
        int apply(String namespace, List<ByteString> hashes, String node, UUID nodeId) throws SessionRejectedException;
    }

    private <T> void ownedHashes(
            StreamObserver<T> observer,
            String namespace,
            List<ByteString> hashes,
            String rawNode,
            String rawNodeId,
            OwnerOp op,
            BiFunction<ResponseStatus, Integer, T> response) {
        if (hashes.isEmpty()) {
            // Reference quirk, kept for wire compatibility: OK at the gRPC level, failure in the body.
            reply(observer, response.apply(status(false, EMPTY_HASHES), 0));
            return;
        }
        handle(observer, () -> {
            UUID nodeId = RequestValidator.nodeId(rawNodeId);
            String node = RequestValidator.node(rawNode);
            validator.hashes(namespace, hashes);
            return response.apply(status(true, ""), op.apply(namespace, hashes, node, nodeId));
        });
    }

    @Override
    public void queryPrefixBlocks(
            QueryPrefixBlocksRequest request, StreamObserver<QueryPrefixBlocksResponse> observer) {
        if (request.getBlockHashesCount() == 0) {
            observer.onError(
                    Status.INVALID_ARGUMENT.withDescription(EMPTY_HASHES).asException());
            return;
        }
        try {
            validator.hashes(request.getNamespace(), request.getBlockHashesList());
        } catch (StatusException e) {
            observer.onError(e);
            return;
        }
        List<PrefixMatch> matches = store.queryPrefix(request.getNamespace(), request.getBlockHashesList());
        QueryPrefixBlocksResponse.Builder response = QueryPrefixBlocksResponse.newBuilder();
        for (PrefixMatch match : matches) {
            response.addNodes(
                    NodePrefixResult.newBuilder().setNode(match.node()).setPrefixLen(match.prefixLen()));
        }
        reply(observer, response.build());
    }

    /** A handler body that validates, calls the store and builds the reply. */
    @FunctionalInterface
    private interface Body<T> {
        T run() throws StatusException, SessionRejectedException;
    }

    /** Runs {@code body} and sends its reply, or the status its failure maps to. */
    private static <T> void handle(StreamObserver<T> observer, Body<T> body) {
        T response;
        try {
            response = body.run();
        } catch (StatusException e) {
            observer.onError(e);
            return;
        } catch (SessionRejectedException e) {
            observer.onError(rejected(e));
            return;
        }
        reply(observer, response);
    }

    private static <T> void reply(StreamObserver<T> observer, T response) {
        observer.onNext(response);
        observer.onCompleted();
    }

    private static ResponseStatus status(boolean ok, String message) {
        return ResponseStatus.newBuilder().setOk(ok).setMessage(message).build();
    }

    /** FAILED_PRECONDITION with the reference's text; a fenced id also gets a trailer so its operator can tell. */
    private static StatusException rejected(SessionRejectedException e) {
        Metadata trailers = new Metadata();
        if (e.reason() == SessionRejectedException.Reason.FENCED) {
            trailers.put(MetaserverMetadata.FENCED_KEY, MetaserverMetadata.FENCED_VALUE);
        }
        return Status.FAILED_PRECONDITION
                .withDescription(e.reason().wireMessage())
                .asException(trailers);
    }
}
