package io.pegaflow.core.ssd;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * SSD store write and read throughput against a raw {@code O_DIRECT} baseline ({@code dd oflag=direct} /
 * {@code iflag=direct}) on the same filesystem with the same block size, in the same run. Results go to
 * {@code docs/ssd.md}.
 *
 * <p>Each store block is one contiguous slot of the block size (one pool allocation); the store adds its 512-byte
 * header (plus padding to the next 4 KiB, so each entry costs one extra 4 KiB block of writing), the CRC32C of the
 * payload (computed on write, verified on read) and the index. Throughput counts payload bytes only. The baseline is
 * {@code dd} at queue depth 1 onto a preallocated file, as the store's shard is; a second baseline, {@code raw}, is the
 * same {@code pwrite}/{@code pread} loop from this JVM straight from pool memory. The store runs twice: at queue depth
 * 1 (write and read in-flight 1, the same concurrency as {@code dd}) and with the defaults (2 writes, 16 reads).
 * The three variants run interleaved, in a rotating order, {@code reps} times; the table gives medians, and each
 * percentage is the median over passes of store/dd measured back to back, which cancels most of a shared or
 * throttled disk's drift.
 *
 * <p>Run (from the repository root):
 *
 * <pre>
 * ./mvnw -q -B -ntp -o -pl pega-core test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=target/test-classpath.txt -Dmdep.includeScope=test
 * java -cp pega-core/target/test-classes:pega-core/target/classes:$(cat pega-core/target/test-classpath.txt) \
 *     io.pegaflow.core.ssd.SsdThroughputBenchmark /var/tmp/pega-bench 1024 5
 * </pre>
 *
 * Arguments: a directory on the filesystem under test, MiB per pass (default 1024), passes (default 5), block sizes in
 * KiB, comma separated (default 256,1024,4096).
 */
public final class SsdThroughputBenchmark {
    private static final long MIB = 1 << 20;
    private static final long[] BLOCK_SIZES = {256 * 1024, MIB, 4 * MIB};
    private static final Pattern DD = Pattern.compile("(\\d+) bytes .* copied, ([0-9.]+) s");

    private SsdThroughputBenchmark() {}

    public static void main(String[] args) throws IOException, InterruptedException {
        Path dir = Path.of(args.length > 0 ? args[0] : "/var/tmp/pega-bench");
        long totalBytes = (args.length > 1 ? Long.parseLong(args[1]) : 1024) * MIB;
        int reps = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        long[] sizes = args.length > 3
                ? Arrays.stream(args[3].split(","))
                        .mapToLong(k -> Long.parseLong(k) * 1024)
                        .toArray()
                : BLOCK_SIZES;
        Files.createDirectories(dir);
        System.out.printf(
                "filesystem: %s, %d MiB per pass, %d passes (dd, raw and store interleaved), %d cores%n",
                Files.getFileStore(dir).type(),
                totalBytes / MIB,
                reps,
                Runtime.getRuntime().availableProcessors());
        System.out.println("median GB/s over the passes; % = median over passes of store/dd in the same pass");
        System.out.println("| block | dd write | raw pwrite | store write QD1 | % | store write (2 in flight) | % |"
                + " dd read | raw pread | store read QD1 | % | store read (16 in flight) | % |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        StringBuilder passes = new StringBuilder();
        Path source = Path.of("/dev/shm", "pega-bench-random.bin");
        run("sh", "-c", "head -c " + totalBytes + " /dev/urandom > " + source);
        try (PinnedMemoryPool sourcePool = PinnedMemoryPool.create(PoolConfig.of(256 * MIB));
                PinnedMemoryPool target = PinnedMemoryPool.create(PoolConfig.of(256 * MIB))) {
            for (long size : sizes) {
                SsdFixtures fill = new SsdFixtures(sourcePool);
                int distinct = (int) Math.min(totalBytes / size, 128 * MIB / size);
                List<SealedBlock> blocks = new ArrayList<>();
                for (int i = 0; i < distinct; i++) {
                    blocks.add(fill.block(i, 1, size));
                }
                double[][] r = new double[8][reps]; // writes: dd, qd1, default, raw; reads: the same
                for (int rep = 0; rep < reps; rep++) {
                    for (int step = 0; step < 4; step++) {
                        int which = (rep + step) % 4; // rotate the order so drift hits every variant alike
                        double[] x = switch (which) {
                            case 0 -> dd(dir, source, size, totalBytes);
                            case 1 -> store(dir, size, totalBytes, 1, 1, blocks, target);
                            case 2 -> store(dir, size, totalBytes, 2, 16, blocks, target);
                            default -> raw(dir, size, totalBytes, blocks, target);
                        };
                        r[which][rep] = x[0];
                        r[4 + which][rep] = x[1];
                    }
                }
                String label = size >= MIB ? (size / MIB) + " MiB" : (size / 1024) + " KiB";
                String[] names = {
                    "dd w", "store w QD1", "store w 2", "raw w", "dd r", "store r QD1", "store r 16", "raw r"
                };
                passes.append(label).append(':');
                for (int v = 0; v < names.length; v++) {
                    passes.append(' ').append(names[v]).append(' ');
                    for (double x : r[v]) {
                        passes.append(String.format("%.2f/", x / 1e9));
                    }
                    passes.setLength(passes.length() - 1);
                    passes.append(';');
                }
                passes.append('\n');
                blocks.forEach(SealedBlock::release);
                System.out.printf(
                        "| %s | %s | %s | %s | %.0f %% | %s | %.0f %% | %s | %s | %s | %.0f %% | %s | %.0f %% |%n",
                        label,
                        gbps(median(r[0])),
                        gbps(median(r[3])),
                        gbps(median(r[1])),
                        ratio(r[1], r[0]),
                        gbps(median(r[2])),
                        ratio(r[2], r[0]),
                        gbps(median(r[4])),
                        gbps(median(r[7])),
                        gbps(median(r[5])),
                        ratio(r[5], r[4]),
                        gbps(median(r[6])),
                        ratio(r[6], r[4]));
            }
        } finally {
            Files.deleteIfExists(source);
        }
        System.out.println();
        System.out.println("per pass, GB/s:");
        System.out.print(passes);
    }

    /**
     * {write, read} bytes per second of plain {@code pwrite}/{@code pread} with O_DIRECT from this JVM, queue depth 1,
     * from and into pool memory: the baseline without dd's copy from {@code /dev/zero}.
     */
    private static double[] raw(Path dir, long size, long total, List<SealedBlock> sources, PinnedMemoryPool target) {
        Path file = dir.resolve("raw.bin");
        int count = (int) (total / size);
        io.pegaflow.core.memory.PinnedAllocation into = target.allocate(size);
        try (IoScratch iov = new IoScratch(4096, 1)) {
            Files.deleteIfExists(file);
            DirectIoFile f = DirectIoFile.open(file);
            try {
                f.resize(total);
                long started = System.nanoTime();
                for (int i = 0; i < count; i++) {
                    long at = iov.iovAddress(1);
                    NativeIo.putIovec(
                            at, 0, sources.get(i % sources.size()).slot(0).address(0), size);
                    if (f.writev(at, 1, (long) i * size) != size) {
                        throw new IllegalStateException("short raw write");
                    }
                }
                double write = (double) count * size / ((System.nanoTime() - started) / 1e9);
                started = System.nanoTime();
                for (int i = 0; i < count; i++) {
                    if (f.read(into.address(), size, (long) i * size) != size) {
                        throw new IllegalStateException("short raw read");
                    }
                }
                double read = (double) count * size / ((System.nanoTime() - started) / 1e9);
                return new double[] {write, read};
            } finally {
                f.close();
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } finally {
            into.release();
        }
    }

    /** Median over passes of {@code store / dd} within the same pass, in percent. */
    private static double ratio(double[] store, double[] dd) {
        double[] q = new double[store.length];
        for (int i = 0; i < q.length; i++) {
            q[i] = 100 * store[i] / dd[i];
        }
        return median(q);
    }

    /**
     * {write, read} bytes per second of dd with O_DIRECT at this block size onto a preallocated file. The input is
     * {@code source}, random bytes in tmpfs: writing zeros from {@code /dev/zero} measured 20-40 % faster on the
     * virtual disk used here, which would flatter the baseline.
     */
    private static double[] dd(Path dir, Path source, long size, long total) throws IOException, InterruptedException {
        Path file = dir.resolve("dd.bin");
        Files.deleteIfExists(file);
        run("fallocate", "-l", Long.toString(total), file.toString());
        long count = total / size;
        double write =
                run("dd", "if=" + source, "of=" + file, "bs=" + size, "count=" + count, "oflag=direct", "conv=notrunc");
        double read = run("dd", "if=" + file, "of=/dev/null", "bs=" + size, "count=" + count, "iflag=direct");
        Files.deleteIfExists(file);
        return new double[] {write, read};
    }

    /** Runs a command; for dd returns its bytes per second. */
    private static double run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(600, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
        }
        Matcher m = DD.matcher(out);
        return m.find() ? Long.parseLong(m.group(1)) / Double.parseDouble(m.group(2)) : 0;
    }

    /** {write, read} bytes per second (payload bytes) of the store. */
    private static double[] store(
            Path dir,
            long size,
            long total,
            int writeInflight,
            int readInflight,
            List<SealedBlock> sources,
            PinnedMemoryPool target) {
        Path shard = dir.resolve("shard.dat");
        try {
            Files.deleteIfExists(shard);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        int count = (int) (total / size);
        long capacity = (long) count * (size + 4096) + MIB;
        SsdConfig config = new SsdConfig(List.of(shard), capacity, 8, 2, writeInflight, readInflight, false);
        int distinct = sources.size();
        List<BlockKey> keys = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            keys.add(SsdFixtures.key("bench-" + size, i));
        }
        try (SsdStore store = SsdStore.open(config)) {
            int batch = 8;
            long started = System.nanoTime();
            for (int from = 0; from < count; from += batch) {
                while (store.metrics().gauge(SsdGauge.WRITE_QUEUE_PENDING) >= 4L * batch) {
                    // Coarse: a tight poll would take a core from the writer's checksums on a small machine.
                    LockSupport.parkNanos(250_000);
                }
                int to = Math.min(count, from + batch);
                List<SealedBlock> b = new ArrayList<>();
                for (int i = from; i < to; i++) {
                    b.add(sources.get(i % distinct));
                }
                store.offer(keys.subList(from, to), b);
            }
            store.flush().join();
            double writeSeconds = (System.nanoTime() - started) / 1e9;
            if (store.metrics().count(SsdCounter.WRITE_QUEUE_FULL) != 0
                    || store.metrics().count(SsdCounter.WRITE_BLOCKS) != count) {
                throw new IllegalStateException(
                        "dropped writes: " + store.metrics().count(SsdCounter.WRITE_QUEUE_FULL));
            }

            int readBatch = 16;
            Deque<CompletableFuture<List<SealedBlock>>> outstanding = new ArrayDeque<>();
            long readBytes = 0;
            started = System.nanoTime();
            int next = 0;
            while (next < count || !outstanding.isEmpty()) {
                while (next < count && outstanding.size() < 2) {
                    int to = Math.min(count, next + readBatch);
                    outstanding.add(store.readPrefix(keys.subList(next, to), target::allocate));
                    next = to;
                }
                List<SealedBlock> got = outstanding.poll().join();
                for (SealedBlock b : got) {
                    readBytes += b.footprintBytes();
                    b.release();
                }
            }
            double readSeconds = (System.nanoTime() - started) / 1e9;
            if (readBytes != (long) count * size) {
                throw new IllegalStateException("read " + readBytes + " of " + (long) count * size + " bytes");
            }
            return new double[] {(double) count * size / writeSeconds, readBytes / readSeconds};
        } finally {
            try {
                Files.deleteIfExists(shard);
            } catch (IOException e) {
                // Reported, not thrown: a throw from here would replace the run's own failure. The next run deletes
                // the file before it starts, and fails there if it still cannot.
                System.err.println("could not delete " + shard + ": " + e);
            }
        }
    }

    private static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        return v[v.length / 2];
    }

    private static String gbps(double bytesPerSecond) {
        return String.format("%.2f GB/s", bytesPerSecond / 1e9);
    }
}
