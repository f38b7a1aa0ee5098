package io.pegaflow.server.transfer;

import com.google.protobuf.ByteString;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.stub.StreamObserver;
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
import java.io.IOException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A small in-memory {@code pegaflow.MetaServer} that keeps owners per block and answers {@code QueryPrefixBlocks}
 * with each owner's contiguous prefix, as pega-metaserver does (which is not on this module's test classpath); every
 * session is accepted. Tests also plant owners that do not exist.
 */
final class OwnerIndexMetaServer implements AutoCloseable {
    private final Map<String, Set<String>> owners = new ConcurrentHashMap<>();
    private final Server server;

    OwnerIndexMetaServer() throws IOException {
        this(InsecureServerCredentials.create());
    }

    /** Over {@code transport}: plaintext or TLS. */
    OwnerIndexMetaServer(ServerCredentials transport) throws IOException {
        this.server = Grpc.newServerBuilderForPort(0, transport)
                .addService(new Service())
                .build()
                .start();
    }

    String target() {
        return "127.0.0.1:" + server.getPort();
    }

    /** The nodes that own {@code hash}, in the order they announced it. */
    Set<String> ownersOf(String namespace, ByteString hash) {
        return Set.copyOf(owners.getOrDefault(key(namespace, hash), Set.of()));
    }

    /** Announces a node that may not exist. */
    void plant(String namespace, List<ByteString> hashes, String node) {
        for (ByteString h : hashes) {
            owners.computeIfAbsent(key(namespace, h), k -> ConcurrentHashMap.newKeySet())
                    .add(node);
        }
    }

    void forget(String node) {
        owners.values().forEach(s -> s.remove(node));
    }

    private static String key(String namespace, ByteString hash) {
        return namespace + "/" + HexFormat.of().formatHex(hash.toByteArray());
    }

    @Override
    public void close() {
        try {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private final class Service extends MetaServerGrpc.MetaServerImplBase {
        private final ResponseStatus ok =
                ResponseStatus.newBuilder().setOk(true).build();

        @Override
        public void heartbeatNode(HeartbeatNodeRequest r, StreamObserver<HeartbeatNodeResponse> out) {
            out.onNext(HeartbeatNodeResponse.newBuilder().setStaleAfterSecs(30).build());
            out.onCompleted();
        }

        @Override
        public void insertBlockHashes(InsertBlockHashesRequest r, StreamObserver<InsertBlockHashesResponse> out) {
            plant(r.getNamespace(), r.getBlockHashesList(), r.getNode());
            out.onNext(InsertBlockHashesResponse.newBuilder()
                    .setStatus(ok)
                    .setInsertedCount(r.getBlockHashesCount())
                    .build());
            out.onCompleted();
        }

        @Override
        public void removeBlockHashes(RemoveBlockHashesRequest r, StreamObserver<RemoveBlockHashesResponse> out) {
            long removed = 0;
            for (ByteString h : r.getBlockHashesList()) {
                Set<String> s = owners.get(key(r.getNamespace(), h));
                if (s != null && s.remove(r.getNode())) {
                    removed++;
                }
            }
            out.onNext(RemoveBlockHashesResponse.newBuilder()
                    .setStatus(ok)
                    .setRemovedCount(removed)
                    .build());
            out.onCompleted();
        }

        @Override
        public void queryPrefixBlocks(QueryPrefixBlocksRequest r, StreamObserver<QueryPrefixBlocksResponse> out) {
            Map<String, Integer> prefix = new LinkedHashMap<>();
            for (int i = 0; i < r.getBlockHashesCount(); i++) {
                Set<String> s = owners.getOrDefault(key(r.getNamespace(), r.getBlockHashes(i)), Set.of());
                if (i == 0) {
                    new LinkedHashSet<>(s).forEach(n -> prefix.put(n, 1));
                } else {
                    for (String n : new ArrayList<>(prefix.keySet())) {
                        if (prefix.get(n) == i && s.contains(n)) {
                            prefix.put(n, i + 1);
                        }
                    }
                }
            }
            QueryPrefixBlocksResponse.Builder b = QueryPrefixBlocksResponse.newBuilder();
            prefix.forEach((n, len) ->
                    b.addNodes(NodePrefixResult.newBuilder().setNode(n).setPrefixLen(len)));
            out.onNext(b.build());
            out.onCompleted();
        }

        @Override
        public void unregisterNode(UnregisterNodeRequest r, StreamObserver<UnregisterNodeResponse> out) {
            forget(r.getNode());
            out.onNext(UnregisterNodeResponse.getDefaultInstance());
            out.onCompleted();
        }
    }
}
