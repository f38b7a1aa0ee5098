package io.pegaflow.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.server.PegaServerApplication;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.unit.DataSize;

/** Sizes take the load generator's units too: KiB and KB (and MiB, MB, ...) are the same binary multiples. */
@Timeout(60)
class SizeConverterTest {
    private final SizeConverter converter = new SizeConverter();

    @Test
    void shouldReadIecAndSpringSpellingsAlike() {
        assertThat(converter.convert("16MiB")).isEqualTo(DataSize.ofMegabytes(16));
        assertThat(converter.convert("16MB")).isEqualTo(DataSize.ofMegabytes(16));
        assertThat(converter.convert("16mib")).isEqualTo(DataSize.ofMegabytes(16));
        assertThat(converter.convert("2GiB")).isEqualTo(DataSize.ofGigabytes(2));
        assertThat(converter.convert("4KiB")).isEqualTo(DataSize.ofKilobytes(4));
        assertThat(converter.convert("1TiB")).isEqualTo(DataSize.ofTerabytes(1));
        assertThat(converter.convert("512B")).isEqualTo(DataSize.ofBytes(512));
        assertThat(converter.convert("4096")).isEqualTo(DataSize.ofBytes(4096));
        assertThatThrownBy(() -> converter.convert("lots")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> converter.convert("16M")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldSizeThePoolFromAnIecValue() {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(PegaServerApplication.class)
                .run(
                        "--pega.pool.size=24MiB",
                        "--pega.device.backend=host",
                        "--spring.grpc.server.port=0",
                        "--server.port=0",
                        "--logging.level.root=WARN")) {
            assertThat(context.getBean(PegaEngine.class).pool().capacityBytes()).isEqualTo(24L << 20);
        }
    }
}
