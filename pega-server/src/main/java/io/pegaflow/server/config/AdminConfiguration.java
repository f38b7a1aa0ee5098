package io.pegaflow.server.config;

import io.pegaflow.edge.EdgeConfiguration;
import io.pegaflow.edge.access.AdminAccess;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * The shared edge (exception mapping, interceptor chain, shutdown coordinator) and the server's one admin rule, built
 * from {@code pega.admin.token}; the Shutdown RPC and the HTTP cleanup endpoints both ask it.
 */
@Configuration(proxyBeanMethods = false)
@Import(EdgeConfiguration.class)
class AdminConfiguration {

    @Bean
    AdminAccess adminAccess(PegaProperties properties) {
        return new AdminAccess(properties.admin().token());
    }
}
