package io.pegaflow.server.internode;

import io.pegaflow.core.engine.BlockIndexListener;
import io.pegaflow.edge.access.ClusterChannels;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import java.util.Objects;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.StringUtils;

/**
 * Creates the {@link MetaserverClient} when {@code pega.metaserver.addr} is set. The engine wiring picks it up as
 * its {@link BlockIndexListener}; the client in turn asks for the engine's {@link BlockIndexListener.ResidentBlocks}
 * lazily, so the context starts even where no engine bean exists. Startup fails with a message naming the key when
 * the advertised address cannot be dialled by peers.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(MetaserverClientConfiguration.AddrSet.class)
public class MetaserverClientConfiguration {

    /** Matches when {@code pega.metaserver.addr} has text ({@code @ConditionalOnProperty} also accepts ""). */
    static final class AddrSet implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return StringUtils.hasText(context.getEnvironment().getProperty("pega.metaserver.addr"));
        }
    }

    @Bean(destroyMethod = "close")
    MetaserverClient metaserverClient(
            MetaserverClientProperties properties,
            Environment environment,
            ObjectProvider<BlockIndexListener.ResidentBlocks> residentBlocks,
            ObjectProvider<AgentGroup> agents,
            ClusterChannels cluster) {
        String target = Addresses.metaserverTargets(
                Objects.requireNonNull(properties.addr(), "pega.metaserver.addr is set: AddrSet matched"));
        String advertise = checkedAdvertiseAddr(properties, environment);
        MetaserverClientSettings settings = MetaserverClientSettings.of(
                target,
                advertise,
                properties.queueDepth(),
                properties.heartbeatInterval(),
                properties.rpcTimeout(),
                properties.batchSize());
        return new MetaserverClient(
                        settings,
                        residentBlocks::getIfUnique,
                        NanoClock.SYSTEM,
                        agents.getIfUnique(AgentGroup::new),
                        cluster)
                .start();
    }

    /**
     * Checks both addresses the client would use, without creating it; the startup preflight calls this before the
     * pool is mapped, so a bad address costs no pre-touch.
     *
     * @throws IllegalArgumentException naming the key of the address that cannot be used
     */
    public static void checkAddresses(MetaserverClientProperties properties, Environment environment) {
        if (StringUtils.hasText(properties.addr())) {
            Addresses.metaserverTargets(properties.addr());
            checkedAdvertiseAddr(properties, environment);
        }
    }

    private static String checkedAdvertiseAddr(MetaserverClientProperties properties, Environment environment) {
        String advertise = StringUtils.hasText(properties.advertiseAddr())
                ? properties.advertiseAddr().trim()
                : environment.getProperty("spring.grpc.server.host", "127.0.0.1") + ":"
                        + environment.getProperty("spring.grpc.server.port", "9090");
        return Addresses.checkAdvertise(advertise, properties.allowLoopback());
    }

    @Bean
    MetaserverHealthIndicator metaserverHealthIndicator(MetaserverClient client) {
        return new MetaserverHealthIndicator(client);
    }
}
