package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CudaTopologyTest {

    @Test
    void readsTheNumaNodeOfAPciDeviceFromSysfs(@TempDir Path sys) throws IOException {
        Path dev = Files.createDirectories(sys.resolve("0000:1b:00.0"));
        Files.writeString(dev.resolve("numa_node"), "1\n");
        Path single = Files.createDirectories(sys.resolve("0000:2c:00.0"));
        Files.writeString(single.resolve("numa_node"), "-1\n");

        // the driver prints an 8-digit domain in upper case
        assertThat(CudaTopology.numaNodeOfPciBusId(sys, "00000000:1B:00.0")).isEqualTo(1);
        assertThat(CudaTopology.numaNodeOfPciBusId(sys, "0000:1b:00.0")).isEqualTo(1);
        assertThat(CudaTopology.numaNodeOfPciBusId(sys, "0000:2c:00.0")).isEqualTo(CudaTopology.UNKNOWN_NODE);
        assertThat(CudaTopology.numaNodeOfPciBusId(sys, "0000:3d:00.0")).isEqualTo(CudaTopology.UNKNOWN_NODE);
        assertThat(CudaTopology.numaNodeOfPciBusId(sys, "../../etc")).isEqualTo(CudaTopology.UNKNOWN_NODE);
    }

    @Test
    void countsHostNumaNodes(@TempDir Path nodes) throws IOException {
        assertThat(CudaTopology.hostNumaNodeCount(nodes)).isEqualTo(1);
        Files.createDirectories(nodes.resolve("node0"));
        Files.createDirectories(nodes.resolve("node1"));
        Files.createDirectories(nodes.resolve("possible"));
        assertThat(CudaTopology.hostNumaNodeCount(nodes)).isEqualTo(2);
        assertThat(CudaTopology.hostNumaNodeCount(nodes.resolve("absent"))).isEqualTo(1);
        assertThat(CudaTopology.hostNumaNodeCount()).isGreaterThanOrEqualTo(1);
    }
}
