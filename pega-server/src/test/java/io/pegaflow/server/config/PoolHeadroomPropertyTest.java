package io.pegaflow.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

/** {@code pega.pool.headroom}: unset, 2 GB capped at an eighth of the pool; set, exactly that (0 turns it off). */
class PoolHeadroomPropertyTest {

    private static PegaProperties.Pool pool(String size, @Nullable String headroom) {
        return new PegaProperties.Pool(
                DataSize.parse(size),
                1,
                false,
                -1,
                DataSize.ofBytes(0),
                0,
                DataSize.ofGigabytes(1),
                headroom == null ? null : DataSize.parse(headroom));
    }

    @Test
    void shouldDefaultToTwoGigabytesAtMostAnEighthOfThePool() {
        assertThat(pool("2GB", null).headroomBytes())
                .isEqualTo(DataSize.ofMegabytes(256).toBytes());
        assertThat(pool("16GB", null).headroomBytes())
                .isEqualTo(DataSize.ofGigabytes(2).toBytes());
        assertThat(pool("200GB", null).headroomBytes())
                .isEqualTo(DataSize.ofGigabytes(2).toBytes());
    }

    @Test
    void shouldTakeAnExplicitValueAsItIs() {
        assertThat(pool("16GB", "0B").headroomBytes()).isZero();
        assertThat(pool("16GB", "3GB").headroomBytes())
                .isEqualTo(DataSize.ofGigabytes(3).toBytes());
    }
}
