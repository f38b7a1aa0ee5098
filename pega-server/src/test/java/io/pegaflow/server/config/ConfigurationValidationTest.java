package io.pegaflow.server.config;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.server.PegaServerApplication;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.builder.SpringApplicationBuilder;

/** An unusable value stops startup, and the failure names the key an operator has to fix. */
@Timeout(120)
class ConfigurationValidationTest {

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({
        "pega.pool.size, 0B, pega.pool.size",
        "pega.pool.shards, 0, pega.pool.shards",
        "pega.device.backend, gpu, pega.device.backend",
        "pega.cache.admission, lfu, pega.cache.admission",
        "pega.eviction-batch, 0, pega.eviction-batch",
        "pega.lease.ttl, 0s, pega.lease.ttl",
        "pega.pool.size, lots, pega.pool.size",
        "pega.pool.headroom, 4MB, pega.pool.headroom"
    })
    void shouldRefuseToStartWithAnUnusableValue(String key, String value, String named) {
        // Command-line arguments outrank the jar's application.yml, as they do for an operator.
        SpringApplicationBuilder app = new SpringApplicationBuilder(PegaServerApplication.class);
        String[] args = {
            "--spring.grpc.server.port=0",
            "--server.port=0",
            "--pega.pool.size=4MB",
            "--pega.device.backend=host",
            "--" + key + "=" + value
        };
        assertThatThrownBy(() -> app.run(args)).satisfies(e -> {
            StringBuilder messages = new StringBuilder();
            for (Throwable t = e; t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append('\n');
            }
            org.assertj.core.api.Assertions.assertThat(messages.toString()).contains(named);
        });
    }
}
