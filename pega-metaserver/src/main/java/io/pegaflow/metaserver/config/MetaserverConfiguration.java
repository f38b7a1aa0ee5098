package io.pegaflow.metaserver.config;

import io.pegaflow.metaserver.index.BlockIndex;
import io.pegaflow.metaserver.index.BlockOwnerIndex;
import io.pegaflow.metaserver.index.LifecycleSweeper;
import io.pegaflow.metaserver.index.MetaStore;
import io.pegaflow.metaserver.index.RedisBlockIndex;
import io.pegaflow.metaserver.index.RedisConnection;
import io.pegaflow.metaserver.index.SessionDirectory;
import io.pegaflow.metaserver.node.JdbcNodeStore;
import io.pegaflow.metaserver.node.MetaserverEpoch;
import io.pegaflow.metaserver.node.NodeRegistry;
import io.pegaflow.metaserver.node.NodeSession;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/** Wires the metaserver's state: the node store (after Flyway migrated it), the registry, the index, the sweeper. */
@Configuration(proxyBeanMethods = false)
class MetaserverConfiguration {

    private static final Logger log = LoggerFactory.getLogger(MetaserverConfiguration.class);

    /** Wall clock in UTC; tests register their own adjustable {@link Clock} before the context refreshes. */
    @Bean
    @ConditionalOnMissingBean(Clock.class)
    Clock metaserverClock() {
        return Clock.systemUTC();
    }

    // The store takes a DataSource, which Boot does not recognise as needing the migration; say so explicitly.
    @Bean
    @DependsOnDatabaseInitialization
    JdbcNodeStore jdbcNodeStore(DataSource dataSource) {
        JdbcNodeStore store = new JdbcNodeStore(dataSource);
        log.info(
                "Node lifecycle store on {}; every commit is written before it is acknowledged",
                store.requireDurableCommits());
        return store;
    }

    /** Only for the embedded file database: PostgreSQL has its own operators and monitoring. */
    @Bean
    @ConditionalOnExpression("'${spring.datasource.url:}'.startsWith('jdbc:h2:file:')")
    HealthIndicator databaseFileHealthIndicator(MetaserverProperties properties) {
        return new DatabaseFileHealthIndicator(Path.of(properties.dbPath() + ".mv.db"));
    }

    @Bean
    MetaserverEpoch metaserverEpoch(JdbcNodeStore store, Clock clock, MetaserverProperties properties) {
        MetaserverEpoch epoch = store.startEpoch(clock.millis());
        log.info(
                "Metaserver epoch {} started at {}; node lifecycle: stale_after={}s ttl={}m sweep_interval={}s",
                epoch.epoch(),
                Instant.ofEpochMilli(epoch.startedAtMs()),
                properties.nodeStaleSecs(),
                properties.ttlMinutes(),
                properties.sweepIntervalSecs());
        return epoch;
    }

    @Bean
    MetaserverReadyLog metaserverReadyLog(Environment env, MetaserverEpoch epoch) {
        return new MetaserverReadyLog(env, epoch);
    }

    @Bean
    NodeRegistry nodeRegistry(JdbcNodeStore store, Clock clock, MetaserverProperties properties) {
        return new NodeRegistry(store, clock, properties.staleAfterMs(), properties.ttlMs());
    }

    /** {@code pega.metaserver.index}: this process's memory, or Redis shared by every instance (decision 0032). */
    @Bean
    BlockIndex blockIndex(MetaserverProperties properties, NodeRegistry registry, MetaserverEpoch epoch) {
        if (properties.index().equals("redis")) {
            MetaserverProperties.Redis redis = properties.redis();
            RedisConnection connection =
                    RedisConnection.open(redis.uri(), redis.clusterUris(), Duration.ofMillis(redis.timeoutMs()));
            SessionDirectory directory = new SessionDirectory() {
                @Override
                public @Nullable NodeSession current(String url) {
                    return registry.session(url).orElse(null);
                }

                @Override
                public void refresh() {
                    registry.refreshFromStore();
                }
            };
            try {
                return new RedisBlockIndex(
                        connection,
                        directory,
                        properties.maxBlocksPerNode(),
                        properties.staleAfterMs(),
                        properties.ttlMs(),
                        epoch.epoch(),
                        Duration.ofMillis(redis.timeoutMs()));
            } catch (RuntimeException e) {
                connection.close();
                throw e;
            }
        }
        return new BlockOwnerIndex(
                properties.maxBlocks(),
                properties.maxBlocksPerNode(),
                properties.staleAfterMs(),
                properties.ttlMs(),
                epoch.epoch());
    }

    @Bean
    MetaStore metaStore(NodeRegistry registry, BlockIndex index, Clock clock) {
        return new MetaStore(registry, index, clock);
    }

    @Bean
    LifecycleSweeper lifecycleSweeper(MetaStore store, MetaserverProperties properties) {
        return new LifecycleSweeper(
                store, properties.sweepIntervalMs(), properties.nodeRefreshMs(), properties.fenceRetentionMs());
    }
}
