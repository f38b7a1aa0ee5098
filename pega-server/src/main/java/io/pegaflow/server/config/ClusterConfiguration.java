package io.pegaflow.server.config;

import io.pegaflow.edge.access.ClusterChannels;
import io.pegaflow.edge.access.ClusterCredential;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The cluster credential ({@code pega.cluster.token}) as one bean: the gRPC edge requires it on the RPCs servers make
 * to each other, the peer channels send it, and the push seals its handshakes with it. A node that talks to peers
 * (P2P or the push) without one says, in one WARN line at startup, what any caller can then do.
 */
@Configuration(proxyBeanMethods = false)
public class ClusterConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterConfiguration.class);

    @Bean
    ClusterCredential clusterCredential(ClusterProperties p, Environment env) {
        ClusterCredential credential = ClusterCredential.of(p.token());
        boolean p2p = env.getProperty("pega.rdma.enabled", Boolean.class, false);
        boolean push = env.getProperty("pega.pd.enabled", Boolean.class, false);
        if (!credential.configured() && (p2p || push)) {
            LOG.warn(
                    "No cluster credential (pega.cluster.token): {} accept any caller that reaches the gRPC port{}; set"
                            + " the same secret on every server wherever processes you do not trust can reach it",
                    p2p && push
                            ? "the P2P transfer RPCs and the push's server-to-server RPCs"
                            : p2p
                                    ? "the P2P transfer RPCs (RdmaHandshake, QueryBlocksForTransfer, ReleaseTransferLock)"
                                    : "the push's server-to-server RPCs (LayerArrived, PushFailed, WatchReceive)",
                    push
                            ? ", and push handshakes are not sealed, so their staging and UCX worker addresses can be"
                                    + " rewritten by whoever holds one"
                            : "");
        }
        return credential;
    }

    /**
     * How the server dials its cluster: TLS with {@code pega.cluster.ssl-bundle} when set (an unknown bundle stops
     * startup naming it), else plaintext; the cluster credential on every call either way.
     */
    @Bean
    ClusterChannels clusterChannels(ClusterProperties p, ClusterCredential credential, SslBundles bundles) {
        String name = p.sslBundle().strip();
        if (name.isEmpty()) {
            return ClusterChannels.plaintext(credential);
        }
        try {
            return ClusterChannels.tls(bundles.getBundle(name), credential);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(
                    "pega.cluster.ssl-bundle: " + name + " (expected: the name of a spring.ssl.bundle.* bundle: "
                            + e.getMessage() + ")",
                    e);
        }
    }
}
