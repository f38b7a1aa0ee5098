package io.pegaflow.server.ssd;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.pegaflow.core.ssd.SsdBackingTier;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.core.tier.BackingTier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/**
 * The SSD tier, when {@code pega.ssd.enabled=true}: the store (opened, and recovered from its shards, before the
 * engine starts), which is also the engine's spill, the {@link SsdBackingTier} the engine fetches from, the health
 * indicator and the meters. The engine configuration picks the tier and the spill up by type.
 *
 * <p>Ownership: the engine owns the tier and the tier owns the store, so neither bean has a destroy method here; the
 * engine closes the tier (and so the store, waiting for I/O in progress) after its sealing worker stopped and before
 * the pool unmaps.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "pega.ssd", name = "enabled", havingValue = "true")
public class SsdConfiguration {
    /** Where SSD sits in the tier chain: first below RAM (a remote tier comes after it). */
    static final int TIER_ORDER = 100;

    /** Closed by the engine, through the tier. */
    @Bean(destroyMethod = "")
    SsdStore ssdStore(SsdProperties properties) {
        return SsdStore.open(properties.toConfig());
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

    @Bean
    MeterBinder ssdMeterBinder(SsdStore store) {
        return new SsdMeterBinder(store);
    }
}
