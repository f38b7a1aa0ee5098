package io.pegaflow.metaserver.grpc;

import com.google.protobuf.ByteString;
import io.pegaflow.proto.HeartbeatNodeRequest;
import io.pegaflow.proto.InsertBlockHashesRequest;
import io.pegaflow.proto.NodePrefixResult;
import io.pegaflow.proto.QueryPrefixBlocksRequest;
import io.pegaflow.proto.QueryPrefixBlocksResponse;
import io.pegaflow.proto.RemoveBlockHashesRequest;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

/** Request builders for MetaServer tests. */
public final class Requests {

    private Requests() {}

    /** A 32-byte hash (the size of the connector's SHA-256 block hashes) derived from {@code i}. */
    public static ByteString h(long i) {
        ByteBuffer buffer = ByteBuffer.allocate(32);
        buffer.putLong(i).putLong(~i).putLong(i * 31).putLong(i ^ 0x5DEECE66DL);
        return ByteString.copyFrom(buffer.array());
    }

    public static HeartbeatNodeRequest heartbeat(String node, UUID id) {
        return HeartbeatNodeRequest.newBuilder()
                .setNode(node)
                .setNodeId(id.toString())
                .build();
    }

    public static InsertBlockHashesRequest insert(String namespace, String node, UUID id, ByteString... hashes) {
        return InsertBlockHashesRequest.newBuilder()
                .setNamespace(namespace)
                .setNode(node)
                .setNodeId(id.toString())
                .addAllBlockHashes(Arrays.asList(hashes))
                .build();
    }

    public static RemoveBlockHashesRequest remove(String namespace, String node, UUID id, ByteString... hashes) {
        return RemoveBlockHashesRequest.newBuilder()
                .setNamespace(namespace)
                .setNode(node)
                .setNodeId(id.toString())
                .addAllBlockHashes(Arrays.asList(hashes))
                .build();
    }

    public static QueryPrefixBlocksRequest query(String namespace, ByteString... hashes) {
        return QueryPrefixBlocksRequest.newBuilder()
                .setNamespace(namespace)
                .addAllBlockHashes(Arrays.asList(hashes))
                .build();
    }

    /** node to prefix_len. */
    public static Map<String, Integer> prefixes(QueryPrefixBlocksResponse response) {
        return response.getNodesList().stream()
                .collect(Collectors.toMap(NodePrefixResult::getNode, NodePrefixResult::getPrefixLen));
    }
}
