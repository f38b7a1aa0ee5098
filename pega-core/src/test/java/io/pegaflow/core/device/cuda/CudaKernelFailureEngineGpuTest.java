package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.engine.EngineConfig;
import io.pegaflow.core.engine.LayerSave;
import io.pegaflow.core.engine.LeaseLoad;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.engine.QueryOutcome;
import io.pegaflow.core.engine.RegisterCommand;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.load.LoadStateSignal;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The copy kernel failing inside a real engine: a Save whose kernel launch the driver refuses fails with the storage
 * error, leaves no block in the cache and no pool memory held; the same Save then succeeds and its blocks Load back
 * byte for byte into a torch tensor (kernel mode both ways). Needs a GPU and python3 with torch.
 */
@Tag("gpu")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class CudaKernelFailureEngineGpuTest {
    private static final String LAYER = "model.layers.0.self_attn.attn";

    @Test
    void shouldLeaveNoBlockBehindWhenAKernelLaunchFailsAndSaveCleanlyAfterwards() throws Exception {
        assumeTrue(CudaDeviceBackend.isAvailable(), "no CUDA driver or GPU");
        assumeTrue(PythonProducer.usable(), "no python3 with torch and CUDA");
        // 128 KiB per launch: a Save of 8 blocks x 2 planes x 32 KiB takes several launches
        CudaCopyConfig kernel = new CudaCopyConfig(CopyMode.KERNEL, 16, 128 << 10, 32 << 10, 0, 1024);
        PoolConfig poolConfig = PoolConfig.of(256L << 20);
        PinnedMemoryPool pool = PinnedMemoryPool.create(poolConfig);
        CudaDeviceBackend backend = CudaDeviceBackend.create(new int[] {0}, pool.regions(), kernel);
        try (PythonProducer producer = PythonProducer.start(0, Map.of());
                PegaEngine engine = PegaEngine.launch(EngineConfig.defaults(poolConfig), pool, backend)) {
            PythonProducer.Tensor t = producer.alloc("kv", "kv_first", 7);
            engine.registerContextBatch(RegisterCommand.inProcess(
                    "inst",
                    "ns",
                    0,
                    1,
                    1,
                    0,
                    1,
                    0,
                    List.of(LAYER),
                    List.of(t.pickle()),
                    new long[] {t.n()},
                    new long[] {t.b()},
                    new long[] {t.k()},
                    new long[] {t.g()},
                    OptionalInt.of(ProcessUid.current())));
            int[] saved = {3, 1, 4, 5, 9, 2, 6, 8};
            List<byte[]> hashes = new ArrayList<>();
            for (int i = 0; i < saved.length; i++) {
                hashes.add(("block-" + i).getBytes(StandardCharsets.UTF_8));
            }
            List<LayerSave> save = List.of(new LayerSave(LAYER, saved, hashes));

            backend.failKernelLaunch(0, 1);
            assertThatThrownBy(() -> engine.save("inst", 0, 0, 0, save))
                    .isInstanceOf(EngineException.class)
                    .hasMessageContaining("batch copy failed on device 0 (save, kernel launch 1 of ")
                    .hasMessageContaining("cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE")
                    .extracting(e -> ((EngineException) e).kind())
                    .isEqualTo(EngineException.Kind.INTERNAL);
            engine.flushSeals();
            QueryOutcome miss = engine.queryPrefetch("inst", hashes, "r1");
            assertThat(miss.hitBlocks())
                    .as("blocks of the failed save in the cache")
                    .isZero();
            assertThat(pool.outstandingAllocations())
                    .as("pool allocations after the failed save")
                    .isZero();
            assertThat(pool.usedBytes()).isZero();

            engine.save("inst", 0, 0, 0, save);
            engine.flushSeals();
            QueryOutcome hit = engine.queryPrefetch("inst", hashes, "r2");
            assertThat(hit.hitBlocks()).isEqualTo(saved.length);

            producer.zero("kv");
            int[] target = {0, 7, 10, 11, 12, 13, 14, 15};
            Path state = loadState();
            try {
                engine.load(
                        "inst",
                        0,
                        0,
                        state.getFileName().toString(),
                        List.of(LAYER),
                        List.of(new LeaseLoad(hit.lease(), target)));
                assertThat(awaitState(state)).isEqualTo(LoadStateSignal.STATE_SUCCESS);
            } finally {
                Files.deleteIfExists(state);
            }
            assertThat(producer.sha256("kv")).isEqualTo(expectedSha(t, saved, target, 7));
            engine.unregister("inst");
        }
    }

    /** The storage after loading {@code from[i]}'s K and V planes into {@code to[i]} on a zeroed tensor. */
    private static String expectedSha(PythonProducer.Tensor t, int[] from, int[] to, int seed) throws Exception {
        byte[] image = new byte[(int) t.nbytes()];
        for (int i = 0; i < from.length; i++) {
            for (int plane = 0; plane < t.g(); plane++) {
                long s = from[i] * t.b() + plane * t.k();
                long d = to[i] * t.b() + plane * t.k();
                for (long j = 0; j < t.b(); j++) {
                    image[(int) (d + j)] = PythonProducer.patternByte(s + j, seed);
                }
            }
        }
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(image));
    }

    /** A worker's 32-byte load-state object, state pending. */
    private static Path loadState() throws IOException {
        Path p = Path.of("/dev/shm", "pega_load_" + UUID.randomUUID().toString().replace("-", ""));
        ByteBuffer b = ByteBuffer.allocate(32).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(8)
                .putInt(LoadStateSignal.MAGIC)
                .putInt(LoadStateSignal.VERSION)
                .putLong(0)
                .putLong(0)
                .flip();
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.write(b);
        }
        return p;
    }

    private static long awaitState(Path p) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(p)).order(ByteOrder.LITTLE_ENDIAN);
            long s = b.getLong(16);
            if (s != 0) {
                return s;
            }
            Thread.sleep(2);
        }
        throw new AssertionError("load state still pending after 60 s");
    }
}
