package io.pegaflow.server.ssd;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.ssd.SsdBackingTier;
import io.pegaflow.core.ssd.SsdStore;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The SSD tier, when {@code pega.ssd.enabled=true}: the store (opened, and recovered from its shards, before the
 * engine starts), the {@link SsdBackingTier} the engine picks up as its backing tier, the spill and allocator wiring
 * once the engine exists, the health indicator and the meters.
 *
 * <p>Shutdown order: the wiring bean depends on the engine and the store, so it is destroyed first; it unhooks the
 * spill and closes the store (waiting for I/O in progress) while the pool is still mapped.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "pega.ssd", name = "enabled", havingValue = "true")
public class SsdConfiguration {

    @Bean(destroyMethod = "close")
    SsdStore ssdStore(SsdProperties properties) {
        return SsdStore.open(properties.toConfig());
    }

    @Bean
    SsdBackingTier ssdBackingTier(SsdStore store, SsdProperties properties) {
        return new SsdBackingTier(store, properties.maxPrefetchBlocks());
    }

    @Bean
    SsdEngineWiring ssdEngineWiring(PegaEngine engine, SsdBackingTier tier) {
        return new SsdEngineWiring(engine, tier);
    }

    @Bean
    SsdHealthIndicator ssdHealthIndicator(SsdStore store) {
        return new SsdHealthIndicator(store);
    }

    @Bean
    MeterBinder ssdMeterBinder(SsdStore store) {
        return new SsdMeterBinder(store);
    }

    /** Connects tier and engine after both exist, and disconnects them first at shutdown. */
    static final class SsdEngineWiring implements SmartInitializingSingleton, DisposableBean {
        private final PegaEngine engine;
        private final SsdBackingTier tier;

        SsdEngineWiring(PegaEngine engine, SsdBackingTier tier) {
            this.engine = engine;
            this.tier = tier;
        }

        @Override
        public void afterSingletonsInstantiated() {
            tier.bindAllocator(engine::allocateWithReclaim);
            engine.setSpill(tier);
        }

        @Override
        public void destroy() {
            engine.setSpill(null);
            tier.bindAllocator(null);
            tier.store().close();
        }
    }
}
