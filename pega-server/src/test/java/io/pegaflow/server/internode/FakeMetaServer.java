package io.pegaflow.server.internode;

import com.google.protobuf.ByteString;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.pegaflow.proto.HeartbeatNodeRequest;
import io.pegaflow.proto.HeartbeatNodeResponse;
import io.pegaflow.proto.InsertBlockHashesRequest;
import io.pegaflow.proto.InsertBlockHashesResponse;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.proto.RemoveBlockHashesRequest;
import io.pegaflow.proto.RemoveBlockHashesResponse;
import io.pegaflow.proto.ResponseStatus;
import io.pegaflow.proto.UnregisterNodeRequest;
import io.pegaflow.proto.UnregisterNodeResponse;
import io.pegaflow.proto.ext.MetaserverMetadata;
import java.io.IOException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small in-memory {@code pegaflow.MetaServer} on an ephemeral port with the wire behaviour the client relies on:
 * sessions fenced by node_id, the reference's status texts, the {@code pega-metaserver-epoch} header. Tests
 * "restart" it (new epoch, empty index, sessions kept, as pega-metaserver does), make it fail, or fence a node_id.
 * (pega-metaserver itself is not on this module's test classpath: its JDBC and Flyway auto-configuration would
 * switch on in every server test.)
 */
final class FakeMetaServer implements AutoCloseable {

    final Map<String, String> sessions = new ConcurrentHashMap<>();
    final Set<String> fenced = ConcurrentHashMap.newKeySet();
    /** namespace + "/" + hash (hex) for every indexed block. */
    final Set<String> blocks = ConcurrentHashMap.newKeySet();

    final CopyOnWriteArrayList<Integer> insertSizes = new CopyOnWriteArrayList<>();
    final CopyOnWriteArrayList<String> unregistered = new CopyOnWriteArrayList<>();
    final AtomicInteger heartbeats = new AtomicInteger();
    final AtomicLong epoch = new AtomicLong(1);
    volatile Status failure;
    private final Server server;

    FakeMetaServer() throws IOException {
        this(InsecureServerCredentials.create());
    }

    /** Over {@code transport} (plaintext or TLS), with {@code guards} in front of the service. */
    FakeMetaServer(ServerCredentials transport, ServerInterceptor... guards) throws IOException {
        this.server = Grpc.newServerBuilderForPort(0, transport)
                .addService(ServerInterceptors.intercept(
                        ServerInterceptors.intercept(new Service(), new EpochHeader()), guards))
                .build()
                .start();
    }

    String target() {
        return "127.0.0.1:" + server.getPort();
    }

    /** What a pega-metaserver restart looks like to clients: new epoch, empty index, sessions persisted. */
    void restart() {
        blocks.clear();
        epoch.incrementAndGet();
    }

    static String key(String namespace, ByteString hash) {
        StringBuilder hex = new StringBuilder(namespace).append('/');
        for (byte b : hash.toByteArray()) {
            hex.append(String.format("%02x", b));
        }
        return hex.toString();
    }

    static String key(String namespace, byte[] hash) {
        return key(namespace, ByteString.copyFrom(hash));
    }

    @Override
    public void close() {
        try {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private final class EpochHeader implements ServerInterceptor {
        private final Metadata.Key<String> key =
                Metadata.Key.of("pega-metaserver-epoch", Metadata.ASCII_STRING_MARSHALLER);

        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(
                ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            return next.startCall(
                    new SimpleForwardingServerCall<>(call) {
                        @Override
                        public void sendHeaders(Metadata responseHeaders) {
                            responseHeaders.put(key, Long.toString(epoch.get()));
                            super.sendHeaders(responseHeaders);
                        }
                    },
                    headers);
        }
    }

    private final class Service extends MetaServerGrpc.MetaServerImplBase {

        private boolean failed(StreamObserver<?> observer) {
            Status status = failure;
            if (status != null) {
                observer.onError(status.asRuntimeException());
                return true;
            }
            return false;
        }

        private boolean fencedOut(String node, String id, StreamObserver<?> observer) {
            String current = sessions.get(node);
            if (current == null) {
                observer.onError(Status.FAILED_PRECONDITION
                        .withDescription("unknown node")
                        .asRuntimeException());
                return true;
            }
            if (!current.equals(id)) {
                observer.onError(Status.FAILED_PRECONDITION
                        .withDescription("stale node session")
                        .asRuntimeException());
                return true;
            }
            return false;
        }

        @Override
        public void heartbeatNode(HeartbeatNodeRequest request, StreamObserver<HeartbeatNodeResponse> observer) {
            heartbeats.incrementAndGet();
            if (failed(observer)) {
                return;
            }
            if (fenced.contains(request.getNodeId())) {
                Metadata trailers = new Metadata();
                trailers.put(MetaserverMetadata.FENCED_KEY, MetaserverMetadata.FENCED_VALUE);
                observer.onError(Status.FAILED_PRECONDITION
                        .withDescription("stale node session")
                        .asRuntimeException(trailers));
                return;
            }
            sessions.put(request.getNode(), request.getNodeId());
            observer.onNext(
                    HeartbeatNodeResponse.newBuilder().setStaleAfterSecs(30).build());
            observer.onCompleted();
        }

        @Override
        public void insertBlockHashes(
                InsertBlockHashesRequest request, StreamObserver<InsertBlockHashesResponse> observer) {
            if (failed(observer) || fencedOut(request.getNode(), request.getNodeId(), observer)) {
                return;
            }
            insertSizes.add(request.getBlockHashesCount());
            request.getBlockHashesList().forEach(h -> blocks.add(key(request.getNamespace(), h)));
            observer.onNext(InsertBlockHashesResponse.newBuilder()
                    .setStatus(ResponseStatus.newBuilder().setOk(true))
                    .setInsertedCount(request.getBlockHashesCount())
                    .build());
            observer.onCompleted();
        }

        @Override
        public void removeBlockHashes(
                RemoveBlockHashesRequest request, StreamObserver<RemoveBlockHashesResponse> observer) {
            if (failed(observer) || fencedOut(request.getNode(), request.getNodeId(), observer)) {
                return;
            }
            long removed = request.getBlockHashesList().stream()
                    .filter(h -> blocks.remove(key(request.getNamespace(), h)))
                    .count();
            observer.onNext(RemoveBlockHashesResponse.newBuilder()
                    .setStatus(ResponseStatus.newBuilder().setOk(true))
                    .setRemovedCount(removed)
                    .build());
            observer.onCompleted();
        }

        @Override
        public void unregisterNode(UnregisterNodeRequest request, StreamObserver<UnregisterNodeResponse> observer) {
            if (failed(observer) || fencedOut(request.getNode(), request.getNodeId(), observer)) {
                return;
            }
            sessions.remove(request.getNode());
            unregistered.add(request.getNodeId());
            observer.onNext(UnregisterNodeResponse.getDefaultInstance());
            observer.onCompleted();
        }
    }
}
