package io.pegaflow.server.transfer;

import io.pegaflow.edge.access.ClusterCredential;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.proto.NodePrefixResult;
import io.pegaflow.server.internode.MetaserverClient;
import io.pegaflow.transfer.TransferEngine;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.StringUtils;

/**
 * The {@code remote} tier, when transfers are on and a metaserver is configured (serving needs only the first; fetching
 * needs someone to say who owns what, spec/cluster.md §3). It comes after SSD in the tier chain, so a fetch asks SSD
 * first and a peer for what SSD could not supply.
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

    /** Owned and closed by the engine (closing twice is harmless, so a failed startup closes it too). */
    @Bean(destroyMethod = "close")
    @Order(TIER_ORDER)
    RemoteFetchTier remoteFetchTier(
            MetaserverClient metaserver,
            TransferEngine transfers,
            RdmaProperties rdma,
            TransferMeters meters,
            ClusterCredential credential) {
        return new RemoteFetchTier(
                (namespace, hashes) -> owners(metaserver.queryPrefix(namespace, hashes, rdma.rpcTimeout())),
                transfers,
                metaserver.advertiseAddr(),
                rdma,
                NanoClock.SYSTEM,
                meters::peerSeen,
                credential.attach());
    }

    private static List<RemoteFetchTier.Owner> owners(List<NodePrefixResult> nodes) {
        List<RemoteFetchTier.Owner> out = new ArrayList<>(nodes.size());
        for (NodePrefixResult n : nodes) {
            out.add(new RemoteFetchTier.Owner(
                    n.getNode(), (int) Math.min(Integer.toUnsignedLong(n.getPrefixLen()), Integer.MAX_VALUE)));
        }
        return out;
    }
}
