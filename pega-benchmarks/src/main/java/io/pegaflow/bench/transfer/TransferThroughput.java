package io.pegaflow.bench.transfer;

import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.sys.Posix;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.TransferBatch;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferResult;
import io.pegaflow.transfer.ucx.UcxSharedMemory;
import io.pegaflow.transfer.ucx.UcxTransferEngine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Engine get throughput between two processes, to set against {@code ucx_perftest -t ucp_get} on the same transport
 * in the same run ({@code scripts/bench-transfer.sh} runs both and prints the table in {@code docs/transfer.md}).
 *
 * <p>The {@code target} role registers a pool, fills it and serves until a {@code stop} file appears; over TCP its
 * lanes must progress for the initiator's gets to complete, as a real peer's would. The {@code initiator} connects
 * from the target's descriptor (exchanged through files in {@code --dir}), checks one batch byte for byte, then keeps
 * {@code --window} batches of 16 MiB in flight for {@code --seconds} per operation size and prints one CSV line per
 * size: {@code transports,lanes,op_bytes,MiB_per_s,batches}.
 *
 * <p>{@code --footprint pool} (the default) spreads a batch's operations over 16 MiB on both sides and the window's
 * batches over distinct destinations, as pool traffic is, so a shared-memory get is a copy between DRAM pages.
 * {@code --footprint perftest} makes the operations read and write the same {@code op size} bytes over and over, as
 * {@code ucx_perftest} does with its one buffer per side, one such buffer per connection and window slot (operation
 * {@code k} of a batch uses buffer {@code k mod lanes} of its slot, which is the same lane's within a batch), so that
 * no two lanes write the same cache lines at once; over shared memory those stay in the CPU's caches, which is what
 * ucx_perftest's figure is.
 *
 * <pre>
 * java -cp pega-benchmarks/target/benchmarks.jar io.pegaflow.bench.transfer.TransferThroughput target \
 *     --dir /tmp/tb --nics lo --tls tcp --lanes 2 &amp;
 * java -cp pega-benchmarks/target/benchmarks.jar io.pegaflow.bench.transfer.TransferThroughput initiator \
 *     --dir /tmp/tb --nics lo --tls tcp --lanes 2 --sizes 4194304,65536 --seconds 5
 * </pre>
 */
public final class TransferThroughput {
    private static final long MIB = 1024 * 1024;
    private static final long BATCH_BYTES = 16 * MIB;
    private static final long SOURCE_BYTES = 64 * MIB;
    private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private TransferThroughput() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = options(args);
        String role = args.length > 0 ? args[0] : "";
        Path dir = Path.of(opt.getOrDefault("dir", "/tmp/pega-transfer-bench"));
        TransferConfig config = TransferConfig.of(
                        opt.getOrDefault("nics", "lo"), Integer.parseInt(opt.getOrDefault("lanes", "2")))
                .withTransports(opt.getOrDefault("tls", "tcp"));
        Files.createDirectories(dir);
        switch (role) {
            case "target" -> target(dir, config);
            case "initiator" -> initiator(dir, config, opt);
            default -> throw new IllegalArgumentException("usage: TransferThroughput target|initiator --dir D ...");
        }
    }

    private static void target(Path dir, TransferConfig config) throws Exception {
        // the pool as pega-server allocates it with pega.rdma.enabled: by UCX, so a peer on this host reads it directly
        try (UcxSharedMemory memory = UcxSharedMemory.open(config);
                PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(SOURCE_BYTES + MIB), memory);
                TransferEngine engine = UcxTransferEngine.open(config, memory, pool.regions(), NanoClock.SYSTEM)) {
            PinnedAllocation source =
                    Objects.requireNonNull(pool.allocate(SOURCE_BYTES), "a pool sized for the source has room");
            fill(source.address(), SOURCE_BYTES);
            Files.write(
                    dir.resolve("source.addr"),
                    Long.toString(source.address()).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            publish(dir.resolve("target.desc"), engine.localDescriptor().encode());
            Path stop = dir.resolve("stop");
            while (!Files.exists(stop)) {
                TimeUnit.MILLISECONDS.sleep(100);
            }
            source.release();
        }
    }

    private static void initiator(Path dir, TransferConfig config, Map<String, String> opt) throws Exception {
        int window = Integer.parseInt(opt.getOrDefault("window", "2"));
        long seconds = Long.parseLong(opt.getOrDefault("seconds", "5"));
        String[] sizes = opt.getOrDefault("sizes", "4194304,65536").split(",", -1);
        boolean reuse = switch (opt.getOrDefault("footprint", "pool")) {
            case "pool" -> false;
            case "perftest" -> true;
            default -> throw new IllegalArgumentException("--footprint pool|perftest");
        };
        try (UcxSharedMemory memory = UcxSharedMemory.open(config);
                PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(window * BATCH_BYTES + MIB), memory);
                TransferEngine engine = UcxTransferEngine.open(config, memory, pool.regions(), NanoClock.SYSTEM)) {
            HandshakeDescriptor target = HandshakeDescriptor.decode(await(dir.resolve("target.desc")));
            long source = Long.parseLong(
                    new String(await(dir.resolve("source.addr")), java.nio.charset.StandardCharsets.US_ASCII).strip());
            PeerId peer = new PeerId("target");
            engine.connect(peer, target, TIMEOUT_NANOS).get(60, TimeUnit.SECONDS);
            PinnedAllocation dst =
                    Objects.requireNonNull(pool.allocate(window * BATCH_BYTES), "a pool sized for the window has room");
            for (String size : sizes) {
                long opBytes = Long.parseLong(size.strip());
                verify(engine, peer, dst.address(), source, opBytes);
                run(
                        engine,
                        peer,
                        dst.address(),
                        source,
                        opBytes,
                        reuse,
                        window,
                        TimeUnit.SECONDS.toNanos(1)); // warm-up
                long[] r = run(
                        engine, peer, dst.address(), source, opBytes, reuse, window, TimeUnit.SECONDS.toNanos(seconds));
                double mibPerS = (double) r[0] / MIB / (r[1] / 1e9);
                System.out.printf(
                        Locale.ROOT,
                        "%s,%d,%d,%.1f,%d%n",
                        config.transports(),
                        config.qpsPerPeer(),
                        opBytes,
                        mibPerS,
                        r[2]);
            }
            dst.release();
        } finally {
            Files.write(dir.resolve("stop"), new byte[0]);
        }
    }

    /** Keeps {@code window} batches in flight for {@code nanos}; returns bytes, elapsed nanos, batches. */
    private static long[] run(
            TransferEngine engine,
            PeerId peer,
            long dst,
            long source,
            long opBytes,
            boolean reuse,
            int window,
            long nanos)
            throws Exception {
        ArrayDeque<CompletableFuture<TransferResult>> inFlight = new ArrayDeque<>();
        long start = System.nanoTime();
        long bytes = 0;
        long batches = 0;
        int slot = 0;
        while (System.nanoTime() - start < nanos || !inFlight.isEmpty()) {
            if (inFlight.size() < window && System.nanoTime() - start < nanos) {
                TransferBatch b = reuse
                        ? sameBytes(dst + slot * BATCH_BYTES, source, opBytes, engine.lanes())
                        : batch(dst + slot * BATCH_BYTES, source, opBytes);
                inFlight.add(engine.submit(peer, b, TIMEOUT_NANOS));
                slot = (slot + 1) % window;
                continue;
            }
            TransferResult r = inFlight.poll().get(60, TimeUnit.SECONDS);
            if (!r.isComplete()) {
                throw new IllegalStateException("batch failed: " + r);
            }
            bytes += r.bytesTransferred();
            batches++;
        }
        return new long[] {bytes, System.nanoTime() - start, batches};
    }

    private static TransferBatch batch(long dst, long source, long opBytes) {
        int ops = (int) (BATCH_BYTES / opBytes);
        TransferBatch b = TransferBatch.get(ops);
        for (int k = 0; k < ops; k++) {
            b.add(dst + k * opBytes, source + k * opBytes, opBytes);
        }
        return b;
    }

    /** A batch of the usual size over {@code buffers} buffers of {@code opBytes} per side, op k on k mod buffers. */
    private static TransferBatch sameBytes(long dst, long source, long opBytes, int buffers) {
        int ops = (int) (BATCH_BYTES / opBytes);
        TransferBatch b = TransferBatch.get(ops);
        for (int k = 0; k < ops; k++) {
            long at = (k % buffers) * opBytes;
            b.add(dst + at, source + at, opBytes);
        }
        return b;
    }

    private static void verify(TransferEngine engine, PeerId peer, long dst, long source, long opBytes)
            throws Exception {
        Posix.memset(dst, 0, BATCH_BYTES);
        TransferResult r =
                engine.submit(peer, batch(dst, source, opBytes), TIMEOUT_NANOS).get(60, TimeUnit.SECONDS);
        byte[] got = new byte[(int) MIB];
        for (long off = 0; off < BATCH_BYTES; off += MIB) {
            Posix.copyToArray(dst + off, got, 0, got.length);
            for (int i = 0; i < got.length; i++) {
                if (!r.isComplete() || got[i] != pattern(off + i)) {
                    throw new IllegalStateException("verification failed at byte " + (off + i) + ": " + r);
                }
            }
        }
    }

    private static void fill(long address, long length) {
        byte[] chunk = new byte[(int) MIB];
        for (long off = 0; off < length; off += MIB) {
            for (int i = 0; i < chunk.length; i++) {
                chunk[i] = pattern(off + i);
            }
            Posix.copyFromArray(chunk, 0, address + off, chunk.length);
        }
    }

    private static byte pattern(long offset) {
        return (byte) ((offset * 31) ^ (offset >>> 11));
    }

    private static void publish(Path file, byte[] bytes) throws Exception {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.write(tmp, bytes);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    }

    private static byte[] await(Path file) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(file)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no " + file + " after 60 s");
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        return Files.readAllBytes(file);
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> out = new HashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --name value, got " + args[i]);
            }
            out.put(args[i].substring(2), args[i + 1]);
        }
        return out;
    }
}
