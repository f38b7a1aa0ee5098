package io.pegaflow.server.ssd;

import io.pegaflow.core.ssd.SsdBackingTier;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.server.config.SsdEnabled;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.DependsOn;
import org.springframework.core.annotation.Order;

/**
 * The SSD tier, when {@link SsdEnabled} (paths given, or {@code pega.ssd.enabled=true}): the store (opened, and
 * recovered from its shards, before the engine starts), which is also the engine's spill, the {@link SsdBackingTier}
 * the engine fetches from, and the health indicator; its meters are in the server's catalog ({@code ServerMetric}).
 * The engine configuration picks the tier and the spill up by type.
 *
 * <p>Ownership: the engine owns the tier and the tier owns the store, so neither bean has a destroy method here; the
 * engine closes the tier (and so the store, waiting for I/O in progress) after its sealing worker stopped and before
 * the pool unmaps.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(SsdEnabled.class)
public class SsdConfiguration {
    /** Where SSD sits in the tier chain: first below RAM (a remote tier comes after it). */
    static final int TIER_ORDER = 100;

    /**
     * Closed by the engine, through the tier. The preflight has checked the capacity against the free space before
     * any shard file is allocated; a failed open removes what it created.
     */
    @Bean(destroyMethod = "")
    @DependsOn("startupPreflight")
    SsdStore ssdStore(SsdProperties properties, AgentGroup agents) {
        return SsdStartup.open(properties.toConfig(), agents);
    }

    /** Owned and closed by the engine. */
    @Bean(destroyMethod = "")
    @Order(TIER_ORDER)
    BackingTier ssdBackingTier(SsdStore store, SsdProperties properties) {
        return new SsdBackingTier(store, properties.maxPrefetchBlocks());
    }

    @Bean
    SsdHealthIndicator ssdHealthIndicator(SsdStore store) {
        return new SsdHealthIndicator(store);
    }
}
