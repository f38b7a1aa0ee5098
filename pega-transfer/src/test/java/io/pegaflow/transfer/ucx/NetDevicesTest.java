package io.pegaflow.transfer.ucx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.transfer.TransferException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class NetDevicesTest {
    @TempDir
    Path sys;

    @BeforeEach
    void devices() throws Exception {
        Files.createDirectories(sys.resolve("infiniband/mlx5_0"));
        Files.createDirectories(sys.resolve("infiniband/mlx5_1"));
        Files.createDirectories(sys.resolve("net/eth0"));
    }

    @Test
    void shouldNameRdmaPortsAndKeepInterfaces() {
        assertThat(NetDevices.resolve(List.of("mlx5_0", "mlx5_1:2", "eth0"), "pega.rdma.nics", sys))
                .containsExactly("mlx5_0:1", "mlx5_1:2", "eth0");
    }

    @Test
    void shouldRefuseADeviceThisHostDoesNotHave() {
        assertThatThrownBy(() -> NetDevices.resolve(List.of("mlx5_0", "mlx5_9"), "pega.rdma.nics", sys))
                .isInstanceOfSatisfying(
                        TransferException.class,
                        e -> assertThat(e.kind()).isEqualTo(TransferException.Kind.INIT_FAILED))
                .hasMessageContaining("no RDMA device or network interface named 'mlx5_9'")
                .hasMessageContaining(sys.resolve("infiniband").toString());
        assertThatThrownBy(() -> NetDevices.resolve(List.of("eth0:1"), "pega.rdma.nics", sys))
                .hasMessageContaining("'eth0:1'");
    }

    @Test
    void shouldFindTheLoopbackInterfaceOfThisHost() {
        assertThat(NetDevices.resolve(List.of("lo"), "pega.rdma.nics", Path.of("/sys/class")))
                .containsExactly("lo");
    }
}
