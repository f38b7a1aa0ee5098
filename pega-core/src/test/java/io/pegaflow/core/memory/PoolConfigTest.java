package io.pegaflow.core.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class PoolConfigTest {

    @Test
    void shouldNameTheFieldThatIsOutOfRange() {
        assertThatThrownBy(() -> new PoolConfig(0, 1, false, -1, 0, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("capacityBytes");
        assertThatThrownBy(() -> new PoolConfig(1024, 0, false, -1, 0, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("shards");
        assertThatThrownBy(() -> new PoolConfig(1024, 1, false, -1, -1, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("hintValueSizeBytes");
        assertThatThrownBy(() -> new PoolConfig(1024, 1, false, -2, 0, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("numaNode");
        assertThatThrownBy(() -> new PoolConfig(1024, 1, false, -1, 0, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("pretouchThreads");
    }

    @Test
    void shouldSplitCapacityEvenlyDroppingTheRemainder() {
        PoolConfig config = new PoolConfig(10_000, 3, false, PoolConfig.NO_NUMA_NODE, 0, 0);

        assertThat(config.shardCapacityBytes()).isEqualTo(3_333);
        assertThat(PoolConfig.of(4096)).isEqualTo(new PoolConfig(4096, 1, false, -1, 0, 0));
    }
}
