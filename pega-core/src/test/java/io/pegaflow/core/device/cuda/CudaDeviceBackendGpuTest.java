package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.kernel.plan.RangePlan;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * The cuda backend against real CUDA IPC: a Python process with torch ({@code gpu-tests/producer.py}) allocates
 * tensors in the connector's layouts and pickles {@code CudaIPCWrapper}s; this JVM maps them and copies blocks. Needs
 * a GPU, libcuda and python3 with torch; skipped elsewhere.
 */
@Tag("gpu")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class CudaDeviceBackendGpuTest {
    private static final long HOST_BYTES = 1L << 30;

    private static GpuHostBuffer host;
    private static CudaDeviceBackend backend;
    private static PythonProducer producer;

    @BeforeAll
    static void start() {
        assumeTrue(CudaDeviceBackend.isAvailable(), "no CUDA driver or GPU");
        assumeTrue(PythonProducer.usable(), "no python3 with torch and CUDA");
        host = new GpuHostBuffer(HOST_BYTES + (64L << 20));
        backend = CudaDeviceBackend.create(new int[] {0}, List.of(host.region()));
        producer = PythonProducer.start(0, Map.of());
    }

    @AfterAll
    static void stop() {
        if (producer != null) {
            producer.close();
        }
        if (backend != null) {
            backend.close();
        }
        if (host != null) {
            host.close();
        }
    }

    @Test
    @Order(1)
    void everyConnectorLayoutRoundTripsBitForBitAndSharedAllocationsAreMappedOnce() throws Exception {
        Map<String, PythonProducer.Tensor> tensors = new LinkedHashMap<>();
        tensors.put("kv", producer.alloc("kv", "kv_first", 1));
        tensors.put("bf", producer.alloc("bf", "blocks_first", 2));
        tensors.put("xl", producer.alloc("xl", "cross_layer", 3));
        tensors.put("mla", producer.alloc("mla", "mla", 4));
        tensors.put("sa", producer.alloc("sa", "shared", 5));
        tensors.put("sb", producer.alloc("sb", "shared", 6));

        Map<String, LayerMemory> layers = new LinkedHashMap<>();
        Set<String> handles = new HashSet<>();
        for (var e : tensors.entrySet()) {
            PythonProducer.Tensor t = e.getValue();
            LayerMemory lm = backend.openLayer(Caller.inProcess("test"), 0, t.pickle());
            layers.put(e.getKey(), lm);
            handles.add(CudaIpcWrapperUnpickler.decode(t.pickle()).ipcHandleHex());
            assertThat(lm.sizeBytes()).isEqualTo(t.nbytes());
            assertThat((t.n() - 1) * t.b() + (t.g() - 1) * t.k() + t.b()).isLessThanOrEqualTo(lm.sizeBytes());
        }
        CudaIpcWrapper a = CudaIpcWrapperUnpickler.decode(tensors.get("sa").pickle());
        CudaIpcWrapper b = CudaIpcWrapperUnpickler.decode(tensors.get("sb").pickle());
        assertThat(a.ipcHandleHex()).isEqualTo(b.ipcHandleHex());
        assertThat(backend.openMappings(0)).isEqualTo(handles.size()).isLessThan(tensors.size());
        assertThat(layers.get("sb").baseAddress() - layers.get("sa").baseAddress())
                .isEqualTo(b.storageOffsetBytes() - a.storageOffsetBytes());

        try (DeviceCopier copier = backend.openCopier(0)) {
            int seed = 1;
            for (var e : tensors.entrySet()) {
                PythonProducer.Tensor t = e.getValue();
                LayerMemory lm = layers.get(e.getKey());
                long[] blocks = {3, 1, 2, 7};
                // save: device -> pool (split planes for KV-first, one range per block otherwise)
                RangePlan save = plan(lm, t, blocks);
                runOnThread(() -> copier.copyToHost(save));
                for (int i = 0; i < save.size(); i++) {
                    long devOff = save.srcAddress(i) - lm.baseAddress();
                    long hostOff = save.dstAddress(i) - host.address;
                    for (long j = 0; j < save.lengthBytes(i); j += 997) {
                        assertThat(host.get(hostOff + j))
                                .as("%s range %d byte %d", e.getKey(), i, j)
                                .isEqualTo(PythonProducer.patternByte(devOff + j, seed));
                    }
                }
                // zero the GPU tensor, load the blocks back, and let torch hash what it sees
                producer.zero(t.name());
                RangePlan load = plan(lm, t, blocks).reversed();
                runOnThread(() -> copier.copyToDevice(load));
                byte[] expected = new byte[(int) t.nbytes()];
                for (int i = 0; i < load.size(); i++) {
                    long devOff = load.dstAddress(i) - lm.baseAddress();
                    for (long j = 0; j < load.lengthBytes(i); j++) {
                        expected[(int) (devOff + j)] = PythonProducer.patternByte(devOff + j, seed);
                    }
                }
                assertThat(producer.sha256(t.name()))
                        .as(e.getKey())
                        .isEqualTo(HexFormat.of()
                                .formatHex(MessageDigest.getInstance("SHA-256").digest(expected)));
                seed++;
            }
        }

        int before = backend.openMappings(0);
        layers.remove("sa").close();
        assertThat(backend.openMappings(0))
                .as("the other layer still holds the shared mapping")
                .isEqualTo(before);
        layers.remove("sb").close();
        Set<String> remaining = new HashSet<>();
        for (String n : layers.keySet()) {
            remaining.add(
                    CudaIpcWrapperUnpickler.decode(tensors.get(n).pickle()).ipcHandleHex());
        }
        assertThat(backend.openMappings(0)).isEqualTo(remaining.size());
        for (LayerMemory lm : layers.values()) {
            lm.close();
            lm.close(); // idempotent
        }
        assertThat(backend.openMappings(0)).isZero();
        for (String n : tensors.keySet()) {
            producer.free(n);
        }
    }

    @Test
    @Order(2)
    void wrongDeviceUnknownUuidHostileAndExpandablePicklesAreRejected() throws Exception {
        PythonProducer.Tensor t = producer.alloc("rej", "kv_first", 9);
        assertThatThrownBy(() -> backend.openLayer(Caller.inProcess("test"), 1, t.pickle()))
                .isInstanceOf(EngineException.class)
                .hasMessage("register tensor failed: context dev1 is pinned to device 1 but got 0")
                .extracting(e -> ((EngineException) e).kind())
                .isEqualTo(EngineException.Kind.INTERNAL);

        String uuid = CudaIpcWrapperUnpickler.decode(t.pickle()).deviceUuid();
        byte[] other = replace(t.pickle(), uuid, "00000000-0000-0000-0000-000000000000");
        assertThatThrownBy(() -> backend.openLayer(Caller.inProcess("test"), 0, other))
                .isInstanceOf(EngineException.class)
                .hasMessageContaining("Device UUID 00000000-0000-0000-0000-000000000000 not found");

        assertThatThrownBy(
                        () -> backend.openLayer(Caller.inProcess("test"), 0, PickleResources.hostile("os_system_p4")))
                .isInstanceOf(EngineException.class)
                .hasMessageStartingWith("invalid argument: wrapper_bytes is not a pegaflow CudaIPCWrapper pickle")
                .extracting(e -> ((EngineException) e).kind())
                .isEqualTo(EngineException.Kind.INVALID_ARGUMENT);

        try (PythonProducer expandable =
                PythonProducer.start(0, Map.of("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"))) {
            PythonProducer.Tensor e = expandable.alloc("exp", "kv_first", 1);
            assertThatThrownBy(() -> backend.openLayer(Caller.inProcess("test"), 0, e.pickle()))
                    .isInstanceOf(EngineException.class)
                    .hasMessageContaining("expandable_segments:False")
                    .extracting(x -> ((EngineException) x).kind())
                    .isEqualTo(EngineException.Kind.INVALID_ARGUMENT);
        }
        assertThat(backend.openMappings(0)).isZero();
        producer.free("rej");
    }

    @Test
    @Order(3)
    void theLastCloseOfAMappingWaitsForTheCopyInFlight() throws Exception {
        PythonProducer.Tensor t = producer.alloc("big", "big", 11);
        LayerMemory lm = backend.openLayer(Caller.inProcess("test"), 0, t.pickle());
        // 1 GiB in 64 KiB ranges, in reverse so nothing coalesces: ~100 ms of DMA
        long block = 64 << 10;
        int count = (int) (HOST_BYTES / block);
        RangePlan p = new RangePlan(count);
        for (int i = count - 1; i >= 0; i--) {
            p.add(lm.baseAddress() + (long) i * block, host.address + (long) (count - 1 - i) * block, block);
        }
        assertThat(p.size()).isEqualTo(count);
        AtomicLong copyDone = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        try (DeviceCopier copier = backend.openCopier(0)) {
            Thread saver = new Thread(() -> {
                started.countDown();
                try {
                    copier.copyToHost(p);
                } catch (Throwable e) {
                    failure.set(e);
                }
                copyDone.set(System.nanoTime());
            });
            saver.start();
            started.await();
            Thread.sleep(5);
            lm.close();
            long closed = System.nanoTime();
            saver.join();
            assertThat(failure.get()).isNull();
            assertThat(copyDone.get())
                    .as("copy completed before the unmap returned")
                    .isLessThanOrEqualTo(closed);
        }
        assertThat(backend.openMappings(0)).isZero();
        assertThat(host.get(0)).isEqualTo(PythonProducer.patternByte(HOST_BYTES - block, 11));
        producer.free("big");
    }

    @Test
    @Order(4)
    void aSigkilledProducersMemoryReturnsWhenItsLastLayerIsClosed() throws Exception {
        long freeBefore = backend.memoryInfo(0)[0];
        PythonProducer victim = PythonProducer.start(0, Map.of());
        LayerMemory lm;
        try {
            PythonProducer.Tensor t = victim.alloc("v", "big", 13);
            lm = backend.openLayer(Caller.inProcess("test"), 0, t.pickle());
            long freeMapped = backend.memoryInfo(0)[0];
            assertThat(freeBefore - freeMapped).isGreaterThanOrEqualTo(1L << 30);
            victim.kill();
        } finally {
            victim.close();
        }
        Thread.sleep(1000);
        long freeAfterKill = backend.memoryInfo(0)[0];
        // Whether our mapping keeps the dead owner's bytes readable is the driver's business: report it, assert nothing
        RangePlan p = new RangePlan(1);
        p.add(lm.baseAddress(), host.address, 1 << 20);
        String readAfterKill;
        try (DeviceCopier copier = backend.openCopier(0)) {
            runOnThread(() -> copier.copyToHost(p));
            readAfterKill = host.get(12345) == PythonProducer.patternByte(12345, 13) ? "intact" : "changed";
        } catch (AssertionError e) {
            readAfterKill = "failed: " + e.getCause();
        }
        System.out.println("sigkill: reading the mapping after the owner died: " + readAfterKill);
        lm.close();
        Thread.sleep(500);
        long freeAfterClose = backend.memoryInfo(0)[0];
        System.out.printf(
                "sigkill: free before %d MiB, after kill (still mapped) %d MiB, after close %d MiB%n",
                freeBefore >> 20, freeAfterKill >> 20, freeAfterClose >> 20);
        assertThat(freeAfterClose).isGreaterThanOrEqualTo(freeBefore - (256L << 20));
        assertThat(backend.openMappings(0)).isZero();
    }

    // ------------------------------------------------------------------ helpers

    /** The device-to-host plan the engine would build for these block ids, packed at the start of the host buffer. */
    private static RangePlan plan(LayerMemory lm, PythonProducer.Tensor t, long[] blocks) {
        RangePlan p = new RangePlan(blocks.length * 2);
        long b = t.b();
        boolean split = t.g() == 2 && t.k() > b;
        if (split) {
            long kBase = host.address;
            long vBase = host.address + blocks.length * b;
            for (int i = 0; i < blocks.length; i++) {
                p.add(lm.baseAddress() + blocks[i] * b, kBase + i * b, b);
            }
            for (int i = 0; i < blocks.length; i++) {
                p.add(lm.baseAddress() + blocks[i] * b + t.k(), vBase + i * b, b);
            }
        } else {
            long h = t.g() * b;
            for (int i = 0; i < blocks.length; i++) {
                p.add(lm.baseAddress() + blocks[i] * b, host.address + i * h, h);
            }
        }
        return p;
    }

    /** Runs on a fresh thread, as the engine's lane threads do (a new thread has no current context). */
    private static void runOnThread(Runnable r) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread th = new Thread(() -> {
            try {
                r.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        th.start();
        th.join();
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }

    private static byte[] replace(byte[] data, String from, String to) {
        byte[] f = from.getBytes(StandardCharsets.US_ASCII);
        byte[] t = to.getBytes(StandardCharsets.US_ASCII);
        byte[] out = data.clone();
        outer:
        for (int i = 0; i <= out.length - f.length; i++) {
            for (int j = 0; j < f.length; j++) {
                if (out[i + j] != f[j]) {
                    continue outer;
                }
            }
            System.arraycopy(t, 0, out, i, t.length);
            return out;
        }
        throw new IllegalArgumentException("not found: " + from);
    }
}
