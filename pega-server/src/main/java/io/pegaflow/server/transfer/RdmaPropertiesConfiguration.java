package io.pegaflow.server.transfer;

import io.pegaflow.server.config.EngineCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What {@code pega.rdma.*} sets on the engine whether or not transfers are on: the transfer-lock timeout and the shares
 * of the pool locks may pin (the lock table exists in every engine), checked with the other keys before the engine
 * starts.
 */
@Configuration(proxyBeanMethods = false)
public class RdmaPropertiesConfiguration {

    @Bean
    EngineCustomizer transferLockTimeout(RdmaProperties rdma) {
        return context -> {
            rdma.check();
            context.transferLockTimeout(rdma.transferLockTimeout());
            context.transferLockShares(rdma.transferLockRequesterShare(), rdma.transferLockPoolShare());
        };
    }
}
