package io.pegaflow.metaserver.grpc;

import io.pegaflow.edge.access.ClusterCredential;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.proto.MetaServerGrpc;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The node writes need the cluster credential ({@code pega.cluster.token}, the servers' own secret) when one is set
 * (decision 0031 §1): {@code HeartbeatNode} (which registers a node), {@code InsertBlockHashes},
 * {@code RemoveBlockHashes} and {@code UnregisterNode} without it are UNAUTHENTICATED before the service reads them.
 * {@code QueryPrefixBlocks} stays open: it changes nothing, and operators' tools call it. Without a token a node's
 * writes are bound to its {@code node_id} alone, and a metaserver whose gRPC port is bound off loopback says so once.
 */
@Configuration(proxyBeanMethods = false)
class NodeWriteCredentialConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(NodeWriteCredentialConfiguration.class);

    /** The RPCs that change the index or a node's session. */
    static final Set<String> NODE_WRITES = Set.of(
            MetaServerGrpc.getHeartbeatNodeMethod().getFullMethodName(),
            MetaServerGrpc.getInsertBlockHashesMethod().getFullMethodName(),
            MetaServerGrpc.getRemoveBlockHashesMethod().getFullMethodName(),
            MetaServerGrpc.getUnregisterNodeMethod().getFullMethodName());

    @Bean
    ClusterCredential clusterCredential(@Value("${pega.cluster.token:}") String token, Environment env) {
        ClusterCredential credential = ClusterCredential.checked(token);
        String bind = bindHost(env);
        if (!credential.configured() && !loopback(bind)) {
            LOG.warn(
                    "No cluster credential (pega.cluster.token): the gRPC port on {} accepts node writes"
                            + " (HeartbeatNode, InsertBlockHashes, RemoveBlockHashes, UnregisterNode) from any caller"
                            + " that reaches it, so anyone there can announce blocks under any node address; set the"
                            + " servers' pega.cluster.token here too",
                    bind);
        }
        return credential;
    }

    @Bean
    EdgeInterceptor nodeWriteCredentialInterceptor(ClusterCredential credential) {
        return credential.require(NODE_WRITES);
    }

    /** The host the gRPC server binds: {@code spring.grpc.server.address}'s, else {@code .host}, else every address. */
    static String bindHost(Environment env) {
        String address = env.getProperty("spring.grpc.server.address");
        if (address != null && !address.isBlank()) {
            String a = address.strip();
            int colon = a.lastIndexOf(':');
            String host = colon > 0 && !a.endsWith("]") ? a.substring(0, colon) : a;
            return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        }
        return env.getProperty("spring.grpc.server.host", "*");
    }

    static boolean loopback(String host) {
        if (host.equalsIgnoreCase("localhost")) {
            return true;
        }
        if (host.isEmpty() || (!Character.isDigit(host.charAt(0)) && host.charAt(0) != ':')) {
            return false; // a name other than localhost, or "*": not resolved here
        }
        try {
            return InetAddress.getByName(host).isLoopbackAddress(); // a literal: no lookup
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
