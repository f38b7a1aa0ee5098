package io.pegaflow.sys.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bindings against a real driver: every call the cuda backend uses, once. Needs a GPU. */
@Tag("gpu")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CudaDriverGpuTest {

    @Test
    void bindingsWorkAgainstARealDevice() {
        assumeTrue(Cuda.isAvailable(), "no CUDA driver or GPU");
        assertThat(Cuda.driverVersion()).isGreaterThanOrEqualTo(11000);
        int count = Cuda.deviceCount();
        assertThat(count).isPositive();
        int dev = Cuda.device(0);
        assertThat(Cuda.deviceName(dev)).isNotBlank();
        assertThat(Cuda.deviceUuid(dev)).matches("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
        assertThat(Cuda.pciBusId(dev)).matches("[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]");
        assertThat(Cuda.deviceAttribute(dev, Cuda.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID))
                .isNotNegative();
        assertThat(Cuda.deviceTotalMem(dev)).isGreaterThan(1L << 30);

        long ctx = Cuda.primaryCtxRetain(dev);
        try {
            Cuda.ctxSetCurrent(ctx);
            assertThat(Cuda.ctxGetCurrent()).isEqualTo(ctx);
            long[] info = Cuda.memGetInfo();
            assertThat(info[0]).isPositive().isLessThanOrEqualTo(info[1]);

            long n = 8 << 20;
            long d = Cuda.memAlloc(n);
            long[] range = Cuda.memGetAddressRange(d + 4096);
            assertThat(range[0]).isEqualTo(d);
            assertThat(range[1]).isGreaterThanOrEqualTo(n);
            try (Memory host = new Memory(n)) {
                long h = Pointer.nativeValue(host);
                Cuda.memHostRegister(h, n, Cuda.CU_MEMHOSTREGISTER_PORTABLE);
                try {
                    long stream = Cuda.streamCreate(Cuda.CU_STREAM_NON_BLOCKING);
                    long start = Cuda.eventCreate(0);
                    long end = Cuda.eventCreate(0);
                    for (int i = 0; i < n; i++) {
                        host.setByte(i, (byte) (i * 7));
                    }
                    Cuda.eventRecord(start, stream);
                    Cuda.memcpyHtoDAsync(d, h, n, stream);
                    Cuda.streamSynchronize(stream);
                    host.clear();
                    Cuda.memcpyDtoHAsync(h, d, n, stream);
                    Cuda.eventRecord(end, stream);
                    Cuda.eventSynchronize(end);
                    assertThat(Cuda.eventQuery(end)).isTrue();
                    assertThat(Cuda.eventElapsedTime(start, end)).isPositive();
                    assertThat(host.getByte(12345)).isEqualTo((byte) (12345 * 7));
                    Cuda.memsetD8(d, 0xab, n);
                    Cuda.memcpyDtoH(h, d, 16);
                    assertThat(host.getByte(3)).isEqualTo((byte) 0xab);
                    Cuda.eventDestroy(start);
                    Cuda.eventDestroy(end);
                    Cuda.streamDestroy(stream);
                } finally {
                    Cuda.memHostUnregister(h);
                }
            }
            byte[] handle = Cuda.ipcGetMemHandle(d);
            assertThat(handle).hasSize(64);
            Cuda.memFree(d);
            assertThatThrownBy(() -> Cuda.memFree(d))
                    .isInstanceOf(CudaException.class)
                    .hasMessageStartingWith("cuMemFree_v2 failed: CUDA_ERROR_")
                    .satisfies(e -> assertThat(((CudaException) e).result()).isNotZero());
        } finally {
            Cuda.primaryCtxRelease(dev);
        }
    }

    @Test
    void batchedCopiesMoveEveryRangeAndRefuseABadOne() {
        assumeTrue(Cuda.isAvailable(), "no CUDA driver or GPU");
        assertThat(CudaBatchCopy.unavailableReason())
                .as("cuMemcpyBatchAsync_v2 on this driver")
                .isEmpty();
        int dev = Cuda.device(0);
        long ctx = Cuda.primaryCtxRetain(dev);
        long n = 1 << 20;
        long d = 0;
        long stream = 0;
        try (Memory host = new Memory(2 * n);
                Memory arrays = new Memory(32 + 3 * 8 * 3)) {
            Cuda.ctxSetCurrent(ctx);
            d = Cuda.memAlloc(n);
            stream = Cuda.streamCreate(Cuda.CU_STREAM_NON_BLOCKING);
            long h = Pointer.nativeValue(host);
            Cuda.memHostRegister(h, 2 * n, Cuda.CU_MEMHOSTREGISTER_PORTABLE | Cuda.CU_MEMHOSTREGISTER_DEVICEMAP);
            try {
                assertThat(Cuda.memHostGetDevicePointer(h)).isNotZero();
                for (int i = 0; i < n; i++) {
                    host.setByte(i, (byte) (i * 13));
                }
                long a = Pointer.nativeValue(arrays);
                CudaBatchCopy.writeAttributes(a, CudaBatchCopy.SRC_ACCESS_ORDER_STREAM, 0);
                arrays.setLong(24, 0);
                // three ranges host -> device, out of order and of odd sizes
                long[][] ranges = {{d + 500_000, h + 7, 4099}, {d, h + 100_000, 65_536}, {d + 1000, h + 300_001, 1}};
                for (int i = 0; i < 3; i++) {
                    arrays.setLong(32 + 8L * i, ranges[i][0]);
                    arrays.setLong(32 + 24 + 8L * i, ranges[i][1]);
                    arrays.setLong(32 + 48 + 8L * i, ranges[i][2]);
                }
                CudaBatchCopy.memcpyBatchAsync(a + 32, a + 56, a + 80, 3, a, a + 24, 1, stream);
                Cuda.streamSynchronize(stream);
                Cuda.memcpyDtoH(h + n, d, n);
                for (long[] r : ranges) {
                    for (long j = 0; j < r[2]; j += 97) {
                        assertThat(host.getByte(n + (r[0] - d) + j)).isEqualTo(host.getByte(r[1] - h + j));
                    }
                }
                // the legacy NULL stream is refused before anything is enqueued
                assertThatThrownBy(() -> CudaBatchCopy.memcpyBatchAsync(a + 32, a + 56, a + 80, 3, a, a + 24, 1, 0))
                        .isInstanceOf(CudaException.class)
                        .hasMessageStartingWith("cuMemcpyBatchAsync_v2 failed: CUDA_ERROR_INVALID_VALUE");
            } finally {
                Cuda.memHostUnregister(h);
            }
        } finally {
            if (d != 0) {
                Cuda.memFree(d);
            }
            if (stream != 0) {
                Cuda.streamDestroy(stream);
            }
            Cuda.primaryCtxRelease(dev);
        }
    }
}
