package io.pegaflow.server.transfer;

import io.pegaflow.edge.access.ClusterChannels;
import io.pegaflow.node.NodeContext;
import io.pegaflow.server.config.NodeCustomizer;
import io.pegaflow.server.internode.GrpcPeerBlocks;
import io.pegaflow.server.internode.MetaserverClient;
import io.pegaflow.server.internode.MetaserverOwners;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.StringUtils;

/**
 * The {@code remote} tier, when transfers are on and a metaserver is configured (serving needs only the first; fetching
 * needs someone to say who owns what). It comes after SSD in the tier chain, so a fetch asks SSD first and a peer for
 * what SSD could not supply.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "pega.rdma.enabled", havingValue = "true")
@Conditional(RemoteTierConfiguration.MetaserverSet.class)
public class RemoteTierConfiguration {
    /** After SSD (100). */
    static final int TIER_ORDER = 200;

    /** Matches when {@code pega.metaserver.addr} has text. */
    static final class MetaserverSet implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return StringUtils.hasText(context.getEnvironment().getProperty("pega.metaserver.addr"));
        }
    }

    /**
     * The node builds the tier over its transfer engine, adds it after SSD and closes it; this supplies its settings
     * and its gRPC ports (the peers and the metaserver).
     */
    @Bean
    NodeCustomizer remoteTierNode(
            MetaserverClient metaserver,
            RdmaProperties rdma,
            ObjectProvider<TransferMeters> meters,
            ClusterChannels cluster) {
        return node -> node.remote(new NodeContext.Remote(
                rdma.remoteConfig(),
                new MetaserverOwners(metaserver, rdma.rpcTimeout()),
                new GrpcPeerBlocks(cluster.credentials(), cluster.credential()), // the node owns and closes it
                metaserver.advertiseAddr(),
                // looked up at the first handshake, once the node (and with it the meters) exists
                peer -> meters.ifAvailable(m -> m.peerSeen(peer))));
    }
}
