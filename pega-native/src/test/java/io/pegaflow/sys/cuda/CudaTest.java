package io.pegaflow.sys.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Runs everywhere: nothing here needs a GPU, and on a machine without one it checks the host-only behaviour. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CudaTest {

    @Test
    void probingNeverThrows() {
        Cuda.Availability a = Cuda.probe();
        assertThat(a).isSameAs(Cuda.probe());
        assertThat(Cuda.isAvailable()).isEqualTo(a.usable());
        if (!a.usable()) {
            assertThat(a.reason()).isNotEmpty();
        }
    }

    @Test
    void withoutTheLibraryEveryCallNamesLibcuda() {
        assumeThat(Cuda.probe().loaded()).isFalse();
        assertThatThrownBy(Cuda::deviceCount)
                .isInstanceOf(CudaException.class)
                .hasMessageStartingWith("libcuda failed: CUDA_ERROR_NOT_INITIALIZED")
                .satisfies(e -> assertThat(((CudaException) e).call()).isEqualTo("libcuda"));
        assertThatThrownBy(() -> Cuda.ipcOpenMemHandle(new byte[64])).isInstanceOf(CudaException.class);
    }

    @Test
    void withoutADriverBatchedCopiesAreUnavailableWithAReason() {
        assumeThat(Cuda.probe().loaded()).isFalse();
        assertThat(CudaBatchCopy.unavailableReason())
                .isEqualTo(Cuda.probe().reason())
                .isNotEmpty();
        assertThatThrownBy(() -> CudaModules.moduleLoadData(new byte[] {1}))
                .isInstanceOf(CudaException.class)
                .hasMessageStartingWith("libcuda failed: CUDA_ERROR_NOT_INITIALIZED");
    }

    @Test
    void aMissingLibraryNameIsReportedNotThrown() {
        Cuda.Availability a = Cuda.probeLibrary("libcuda-does-not-exist.so.9");
        assertThat(a.loaded()).isFalse();
        assertThat(a.usable()).isFalse();
        assertThat(a.reason()).contains("libcuda-does-not-exist.so.9");
    }

    @Test
    void uuidsArePrintedLikeTorch() {
        byte[] u = {
            0x79,
            0x00,
            0x79,
            0x3a,
            0x26,
            (byte) 0xd2,
            (byte) 0x8f,
            (byte) 0xc4,
            (byte) 0xd5,
            0x20,
            (byte) 0xe6,
            0x2e,
            (byte) 0xdf,
            (byte) 0xd0,
            (byte) 0xee,
            (byte) 0xc6
        };
        assertThat(Cuda.formatUuid(u)).isEqualTo("7900793a-26d2-8fc4-d520-e62edfd0eec6");
        assertThatThrownBy(() -> Cuda.formatUuid(new byte[15])).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theIpcHandleIsASixtyFourByteStructPassedByValue() {
        byte[] h = new byte[64];
        h[0] = 1;
        h[63] = 2;
        CuIpcMemHandle.ByValue v = new CuIpcMemHandle.ByValue(h);
        assertThat(v.size()).isEqualTo(CuIpcMemHandle.SIZE);
        assertThat(v).isInstanceOf(com.sun.jna.Structure.ByValue.class);
        assertThat(v.reserved[0]).isEqualTo((byte) 1);
        assertThat(v.reserved[63]).isEqualTo((byte) 2);
        assertThatThrownBy(() -> new CuIpcMemHandle.ByValue(new byte[66])).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void exceptionsNameTheCallAndTheError() {
        CudaException e = new CudaException("cuIpcOpenMemHandle_v2", 1, "CUDA_ERROR_INVALID_VALUE", "handle");
        assertThat(e).hasMessage("cuIpcOpenMemHandle_v2 failed: CUDA_ERROR_INVALID_VALUE (1): handle");
        assertThat(e.call()).isEqualTo("cuIpcOpenMemHandle_v2");
        assertThat(e.result()).isEqualTo(1);
        assertThat(e.errorName()).isEqualTo("CUDA_ERROR_INVALID_VALUE");
    }
}
