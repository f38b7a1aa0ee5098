package io.pegaflow.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.ClassPathResource;
import org.springframework.util.unit.DataSize;

/**
 * The shipped {@code production} profile keeps a headroom free in its pool, and one the pool can hold: the engine
 * refuses a headroom that is not less than the pool, so a template that lowered one without the other would not start.
 */
class ProductionProfilePoolTest {
    @Test
    void shouldKeepAHeadroomWellInsideTheProfilesPool() throws IOException {
        StandardEnvironment env = new StandardEnvironment();
        new YamlPropertySourceLoader()
                .load("production", new ClassPathResource("application-production.yml"))
                .forEach(env.getPropertySources()::addFirst);
        Binder binder = new Binder(ConfigurationPropertySources.get(env));

        DataSize size = binder.bind("pega.pool.size", DataSize.class).get();
        DataSize headroom = binder.bind("pega.pool.headroom", DataSize.class).get();

        assertThat(headroom).isEqualTo(DataSize.ofGigabytes(2));
        assertThat(headroom.toBytes())
                .as("at most a tenth of the pool, so the cache keeps most of it")
                .isLessThanOrEqualTo(size.toBytes() / 10);
    }
}
