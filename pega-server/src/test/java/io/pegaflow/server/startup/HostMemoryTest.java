package io.pegaflow.server.startup;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class HostMemoryTest {
    private static final List<String> MEMINFO = List.of(
            "MemTotal:       24683652 kB",
            "MemFree:         1000000 kB",
            "MemAvailable:   20000000 kB",
            "HugePages_Total:     512",
            "HugePages_Free:      256",
            "Hugepagesize:       2048 kB");

    @Test
    void shouldTakeMemAvailableAndTheFreeHugePages() {
        HostMemory m = HostMemory.parse(MEMINFO, null, null);
        assertThat(m.availableBytes()).isEqualTo(20_000_000L * 1024);
        assertThat(m.source()).isEqualTo("MemAvailable");
        assertThat(m.hugePagesFreeBytes()).isEqualTo(256L * 2048 * 1024);
    }

    @Test
    void shouldTakeTheCgroupHeadroomWhenItIsSmaller() {
        // A pod limited to 8 GiB that already uses 3 GiB can pin 5 GiB, whatever the host has free.
        HostMemory m = HostMemory.parse(MEMINFO, String.valueOf(8L << 30), String.valueOf(3L << 30));
        assertThat(m.availableBytes()).isEqualTo(5L << 30);
        assertThat(m.source()).startsWith("cgroup");
    }

    @Test
    void shouldIgnoreAnUnlimitedCgroup() {
        HostMemory m = HostMemory.parse(MEMINFO, "max", String.valueOf(3L << 30));
        assertThat(m.availableBytes()).isEqualTo(20_000_000L * 1024);
    }

    @Test
    void shouldReadThisHost() {
        HostMemory m = HostMemory.read();
        assertThat(m.availableBytes()).isPositive();
        assertThat(m.source()).isNotEqualTo("unknown");
    }
}
