package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.jna.Pointer;
import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.kernel.plan.RangePlan;
import io.pegaflow.sys.OffHeap;
import io.pegaflow.sys.cuda.Cuda;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every copy mode moves every {@link CopyCase} byte for byte in both directions, and touches nothing else: the whole
 * destination buffer is compared with the image the copies must leave (so a kernel that writes past a range's head or
 * tail fails). Also both lanes at once, and the kernel's failure path. Needs a GPU.
 *
 * <pre>
 *   host buffer: [0, 256 MiB) source pattern, also the pool side of loads | [256, 512) save target | [512, 768) readback
 *   device:      src (256 MiB, the pattern uploaded)                     | dst (256 MiB, load target)
 * </pre>
 */
@Tag("gpu")
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class CudaCopyModesGpuTest {
    private static final long REGION = 256L << 20;
    private static final byte SAVE_FILL = (byte) 0xee;

    private static GpuHostBuffer host;
    private static CudaDeviceBackend backend;
    private static long src;
    private static long dst;
    private static ExecutorService saveLane;
    private static ExecutorService loadLane;

    @BeforeAll
    static void start() {
        assumeTrue(CudaDeviceBackend.isAvailable(), "no CUDA driver or GPU");
        host = new GpuHostBuffer(3 * REGION);
        backend = CudaDeviceBackend.create(new int[] {0}, List.of(host.region()));
        bind();
        src = Cuda.memAlloc(REGION);
        dst = Cuda.memAlloc(REGION);
        SplittableRandom r = new SplittableRandom(20261201);
        for (long off = 0; off < REGION; off += 8) {
            OffHeap.putLong(host.address + off, r.nextLong());
        }
        Cuda.memcpyHtoD(src, host.address, REGION);
        saveLane = Executors.newSingleThreadExecutor(t -> new Thread(t, "gpu0-save"));
        loadLane = Executors.newSingleThreadExecutor(t -> new Thread(t, "gpu0-load"));
    }

    @AfterAll
    static void stop() {
        if (saveLane != null) {
            saveLane.shutdownNow();
            loadLane.shutdownNow();
        }
        if (backend != null) {
            bind();
            Cuda.memFree(src);
            Cuda.memFree(dst);
            backend.close();
        }
        if (host != null) {
            host.close();
        }
    }

    private static void bind() {
        Cuda.ctxSetCurrent(backend.device(0).ctx);
    }

    private static CudaCopyConfig config(CopyMode mode) {
        return CudaCopyConfig.defaults().withMode(mode);
    }

    @Test
    void shouldFindBatchedCopiesAndTheKernelOnThisDevice() {
        CopyCapabilities c = backend.copyCapabilities(0);
        assertThat(c.batchUnavailable).as("batched copies").isEmpty();
        assertThat(c.kernelUnavailable).as("copy kernel").isEmpty();
        assertThat(c.kernel.threadsPerCta).isGreaterThanOrEqualTo(512);
    }

    @Test
    void shouldCopyEveryCaseByteForByteInEveryModeAndDirection() throws Exception {
        for (CopyMode mode : CopyMode.values()) {
            try (DeviceCopier copier = backend.openCopier(0, config(mode))) {
                for (CopyCase c : CopyCase.all()) {
                    save(copier, c, mode);
                    load(copier, c, mode);
                }
            }
        }
    }

    /**
     * A copier prepared at registration (streams, submitting threads, descriptor buffers sized for a whole request, and
     * smaller and larger plans than that afterwards) copies as an unprepared one does.
     */
    @Test
    void shouldCopyByteForByteAfterPreparingForTheWholeRequest() throws Exception {
        for (CudaCopyConfig config : List.of(config(CopyMode.AUTO), config(CopyMode.KERNEL), split(2))) {
            bind();
            long freeBefore = Cuda.memGetInfo()[0];
            try (DeviceCopier copier = backend.openCopier(0, config)) {
                saveLane.submit(() -> copier.prepareToHost(73_728, 73_728L << 15))
                        .get(120, TimeUnit.SECONDS);
                loadLane.submit(() -> copier.prepareToDevice(4_096, 4_096L << 15))
                        .get(120, TimeUnit.SECONDS);
                for (CopyCase c : CopyCase.all()) {
                    save(copier, c, config.mode());
                    load(copier, c, config.mode());
                }
            }
            bind();
            assertThat(Cuda.memGetInfo()[0])
                    .as(
                            "device memory after closing the prepared copier (%s): its 4 MiB descriptor buffer went back",
                            config.mode())
                    .isGreaterThanOrEqualTo(freeBefore - (2L << 20));
        }
    }

    @Test
    void shouldCopyBothDirectionsAtOnceInEveryMode() throws Exception {
        CopyCase up = CopyCase.scattered("save 2048 x 16 KiB", 2048, 16 << 10, 11);
        CopyCase down = CopyCase.scattered("load 512 x 64 KiB", 512, 64 << 10, 12);
        for (CopyMode mode : CopyMode.values()) {
            try (DeviceCopier copier = backend.openCopier(0, config(mode))) {
                for (int round = 0; round < 3; round++) {
                    host.fill(REGION, up.hostExtent() + 64, SAVE_FILL);
                    bind();
                    Cuda.memsetD8(dst, 0, REGION);
                    RangePlan s = savePlan(up);
                    RangePlan l = loadPlan(down);
                    Future<?> a = saveLane.submit(() -> copier.copyToHost(s));
                    Future<?> b = loadLane.submit(() -> copier.copyToDevice(l));
                    a.get(120, TimeUnit.SECONDS);
                    b.get(120, TimeUnit.SECONDS);
                    verifySaved(up, mode + " both, round " + round);
                    verifyLoaded(down, mode + " both, round " + round);
                }
            }
        }
    }

    @Test
    void shouldReportAFailedKernelLaunchAfterDrainingAndKeepCopying() throws Exception {
        CopyCase c = CopyCase.oneRange("150 MiB", 150L << 20);
        try (DeviceCopier copier = backend.openCopier(0, config(CopyMode.KERNEL))) {
            backend.failKernelLaunch(0, 1);
            RangePlan p = savePlan(c);
            Future<?> f = saveLane.submit(() -> copier.copyToHost(p));
            assertThatThrownBy(() -> f.get(120, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(EngineException.class)
                    .cause()
                    .hasMessageStartingWith(
                            "storage error: batch copy failed on device 0 (save, kernel launch 1 of 3): cuLaunchKernel")
                    .hasMessageContaining("CUDA_ERROR_INVALID_VALUE");
            // the context is not poisoned: the same copier copies the same plan correctly right after
            save(copier, c, CopyMode.KERNEL);
            load(copier, c, CopyMode.KERNEL);
        }
    }

    /** Submitters forced onto every plan of two whole calls or more, whatever its ranges' size. */
    private static CudaCopyConfig split(int submitters) {
        CudaCopyConfig d = CudaCopyConfig.defaults();
        return new CudaCopyConfig(
                CopyMode.BATCH,
                d.kernelMaxCtas(),
                d.kernelMaxLaunchBytes(),
                0,
                0,
                d.batchMaxRanges(),
                submitters,
                Long.MAX_VALUE,
                2);
    }

    @Test
    void shouldCopyEveryCaseByteForByteSplitOverTwoAndThreeSubmitters() throws Exception {
        for (int submitters : new int[] {2, 3}) {
            try (DeviceCopier copier = backend.openCopier(0, split(submitters))) {
                for (CopyCase c : CopyCase.all()) {
                    save(copier, c, CopyMode.BATCH);
                    load(copier, c, CopyMode.BATCH);
                }
                CopyCase up = CopyCase.scattered("save 4096 x 16 KiB", 4096, 16 << 10, 21);
                CopyCase down = CopyCase.scattered("load 4096 x 32 KiB", 4096, 32 << 10, 22);
                for (int round = 0; round < 3; round++) {
                    host.fill(REGION, up.hostExtent() + 64, SAVE_FILL);
                    bind();
                    Cuda.memsetD8(dst, 0, REGION);
                    RangePlan s = savePlan(up);
                    RangePlan l = loadPlan(down);
                    Future<?> a = saveLane.submit(() -> copier.copyToHost(s));
                    Future<?> b = loadLane.submit(() -> copier.copyToDevice(l));
                    a.get(120, TimeUnit.SECONDS);
                    b.get(120, TimeUnit.SECONDS);
                    verifySaved(up, submitters + " submitters both, round " + round);
                    verifyLoaded(down, submitters + " submitters both, round " + round);
                }
            }
        }
    }

    @Test
    void shouldReportAFailedBatchCallOfEitherSubmitterAfterDrainingAndKeepCopying() throws Exception {
        CopyCase c = CopyCase.scattered("70000 scattered 64 B ranges", 70_000, 64, 23);
        int calls = BatchDescriptors.calls(c.size(), CudaCopyConfig.defaults().batchMaxRanges());
        try (DeviceCopier copier = backend.openCopier(0, split(2))) {
            for (int[] fault : new int[][] {{calls - 3, 2}, {1, 1}}) {
                backend.failBatchCall(0, fault[0]);
                RangePlan p = savePlan(c);
                Future<?> f = saveLane.submit(() -> copier.copyToHost(p));
                assertThatThrownBy(() -> f.get(120, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(EngineException.class)
                        .cause()
                        .hasMessageStartingWith("storage error: batch copy failed on device 0 (save, batch call "
                                + fault[0] + " of " + calls + ", submitter " + fault[1] + " of 2): "
                                + "cuMemcpyBatchAsync_v2");
                // the stream drained and the context is not poisoned: the same plan copies correctly right after
                save(copier, c, CopyMode.BATCH);
                load(copier, c, CopyMode.BATCH);
            }
        }
    }

    private static RangePlan savePlan(CopyCase c) {
        RangePlan p = new RangePlan(c.size());
        for (int i = 0; i < c.size(); i++) {
            p.add(src + c.device()[i], host.address + REGION + c.host()[i], c.length()[i]);
        }
        return p;
    }

    private static RangePlan loadPlan(CopyCase c) {
        RangePlan p = new RangePlan(c.size());
        for (int i = 0; i < c.size(); i++) {
            p.add(host.address + c.host()[i], dst + c.device()[i], c.length()[i]);
        }
        return p;
    }

    /** Device src to the save target; the whole target extent must equal the expected image. */
    private static void save(DeviceCopier copier, CopyCase c, CopyMode mode) throws Exception {
        host.fill(REGION, c.hostExtent() + 64, SAVE_FILL);
        RangePlan p = savePlan(c);
        saveLane.submit(() -> copier.copyToHost(p)).get(120, TimeUnit.SECONDS);
        verifySaved(c, mode.key() + " save of " + c.name());
    }

    /** The host pattern to device dst; the device buffer is read back whole and compared. */
    private static void load(DeviceCopier copier, CopyCase c, CopyMode mode) throws Exception {
        bind();
        Cuda.memsetD8(dst, 0, REGION);
        RangePlan p = loadPlan(c);
        loadLane.submit(() -> copier.copyToDevice(p)).get(120, TimeUnit.SECONDS);
        verifyLoaded(c, mode.key() + " load of " + c.name());
    }

    private static void verifySaved(CopyCase c, String what) {
        int extent = (int) (c.hostExtent() + 64);
        byte[] expected = new byte[extent];
        Arrays.fill(expected, SAVE_FILL);
        Pointer pattern = new Pointer(host.address);
        for (int i = 0; i < c.size(); i++) {
            pattern.read(c.device()[i], expected, (int) c.host()[i], (int) c.length()[i]);
        }
        assertImage(new Pointer(host.address + REGION).getByteArray(0, extent), expected, what);
    }

    private static void verifyLoaded(CopyCase c, String what) {
        int extent = (int) Math.min(REGION, c.deviceExtent() + 64);
        bind();
        Cuda.memcpyDtoH(host.address + 2 * REGION, dst, extent);
        byte[] expected = new byte[extent];
        Pointer pattern = new Pointer(host.address);
        for (int i = 0; i < c.size(); i++) {
            pattern.read(c.host()[i], expected, (int) c.device()[i], (int) c.length()[i]);
        }
        assertImage(new Pointer(host.address + 2 * REGION).getByteArray(0, extent), expected, what);
    }

    private static void assertImage(byte[] actual, byte[] expected, String what) {
        int at = Arrays.mismatch(actual, expected);
        assertThat(at)
                .as(
                        "%s: first differing byte at %d of %d (got %s, want %s)",
                        what, at, expected.length, at >= 0 ? actual[at] : 0, at >= 0 ? expected[at] : 0)
                .isEqualTo(-1);
    }
}
