package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.pegaflow.core.error.EngineException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CudaBackendSelectorTest {

    @Test
    void hostNeverTouchesTheDriverAndAutoFollowsAvailability() {
        assertThat(CudaBackendSelector.choose("host")).isEqualTo(CudaBackendSelector.Choice.HOST);
        assertThat(CudaBackendSelector.choose("auto"))
                .isEqualTo(
                        CudaDeviceBackend.isAvailable()
                                ? CudaBackendSelector.Choice.CUDA
                                : CudaBackendSelector.Choice.HOST);
        assertThat(CudaBackendSelector.choose(null)).isEqualTo(CudaBackendSelector.choose("AUTO"));
    }

    @Test
    void cudaOnAMachineWithoutADriverFailsWithTheReason() {
        assumeThat(CudaDeviceBackend.isAvailable()).isFalse();
        assertThatThrownBy(() -> CudaBackendSelector.choose("cuda"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("CUDA is not usable here");
        assertThat(CudaBackendSelector.unavailableReason()).isNotEmpty();
        assertThatThrownBy(() -> CudaDeviceBackend.create(new int[0], List.of()))
                .isInstanceOf(EngineException.class)
                .hasMessageStartingWith("failed to initialize CUDA: ")
                .extracting(e -> ((EngineException) e).kind())
                .isEqualTo(EngineException.Kind.INTERNAL);
    }

    @Test
    void anUnknownModeIsRejected() {
        assertThatThrownBy(() -> CudaBackendSelector.choose("rocm"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("auto, cuda or host");
    }

    @Test
    void devicesParseLikeTheReferenceFlag() {
        assertThat(CudaBackendSelector.parseDevices(null)).isEmpty();
        assertThat(CudaBackendSelector.parseDevices(" ")).isEmpty();
        assertThat(CudaBackendSelector.parseDevices("0,1, 3")).containsExactly(0, 1, 3);
        assertThat(CudaBackendSelector.parseDevices("2 4")).containsExactly(2, 4);
        assertThatThrownBy(() -> CudaBackendSelector.parseDevices("0,0")).hasMessageContaining("twice");
        assertThatThrownBy(() -> CudaBackendSelector.parseDevices("-1")).hasMessageContaining("negative");
        assertThatThrownBy(() -> CudaBackendSelector.parseDevices("gpu0")).hasMessageContaining("not a device");
    }
}
