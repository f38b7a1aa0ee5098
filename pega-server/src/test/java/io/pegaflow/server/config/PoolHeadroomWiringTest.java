package io.pegaflow.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.engine.PegaEngine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/** {@code pega.pool.headroom} reaches the engine as bytes; its refusals are in {@link ConfigurationValidationTest}. */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.NONE,
        properties = {
            "spring.grpc.server.port=0",
            "pega.pool.size=16MB",
            "pega.pool.headroom=4MB",
            "pega.device.backend=host"
        })
@Timeout(120)
class PoolHeadroomWiringTest {
    @Autowired
    PegaEngine engine;

    @Test
    void shouldHandTheHeadroomToTheEngine() {
        assertThat(engine.config().headroomBytes()).isEqualTo(4L << 20);
    }
}
