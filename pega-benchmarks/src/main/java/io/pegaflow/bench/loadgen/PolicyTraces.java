package io.pegaflow.bench.loadgen;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.device.host.HostDeviceBackend;
import io.pegaflow.core.engine.EngineConfig;
import io.pegaflow.core.engine.EngineContext;
import io.pegaflow.core.engine.LayerSave;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.engine.QueryOutcome;
import io.pegaflow.core.engine.RegisterCommand;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.ssd.SsdBackingTier;
import io.pegaflow.core.ssd.SsdConfig;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.testkit.ShmDeviceMemory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The RAM tier's policies side by side on the same traces, through a real engine in this process (host backend, real
 * pool, real eviction, optionally a real SSD tier), one per {@code pega.cache.admission} value: {@code lru},
 * {@code tinylfu} (LRU behind our own TinyLFU admission sketch) and {@code caffeine} (Caffeine's W-TinyLFU as the
 * policy).
 *
 * <p>A request queries a prefix of blocks; blocks that miss every tier are recomputed by the model and saved again,
 * as the load generator's workers do. Reported per policy: hit ratio by tier (a block counts for RAM when it was
 * resident before the query, for SSD when the query loaded it from there), and bytes re-saved (misses of blocks saved
 * before; a block's first save is compulsory and not counted).
 *
 * <ul>
 *   <li>{@code scan}: decision 0004's recorded trace: 512 blocks of pool, a hot set of 256 single-block prefixes
 *       queried every round, then a scan of 1024 new blocks saved 64 per Save; 6 rounds.
 *   <li>{@code zipf}: one namespace, prefixes of 8 blocks drawn from a Zipf law ({@link Zipf}, s = 0.9) over 2000
 *       prefixes, 4000 requests; the pool holds 1024 blocks.
 *   <li>{@code tenants}: three namespaces with different reuse, interleaved: {@code chat} (50 % of requests, 8-block
 *       prefixes, Zipf 1.2 over 200), {@code rag} (30 %, 16 blocks, Zipf 0.6 over 1500) and {@code batch} (20 %, 32
 *       blocks, never repeated); 4000 requests; the pool holds 1024 blocks.
 * </ul>
 *
 * <pre>
 * java -cp pega-benchmarks/target/benchmarks.jar io.pegaflow.bench.loadgen.PolicyTraces \
 *     [--ssd DIR] [--seed N] [--out FILE]
 * </pre>
 */
public final class PolicyTraces {
    private static final int BLOCK_BYTES = 4096;
    private static final int DEVICE_BLOCKS = 64;
    private static final int HASH_BYTES = 16;
    private static final long LOAD_DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(30);

    /** The RAM tier's policy under test. */
    enum Policy {
        LRU("lru"),
        SKETCH("tinylfu"),
        CAFFEINE("caffeine");

        private final String key;

        Policy(String key) {
            this.key = key;
        }

        /** The {@code pega.cache.admission} value. */
        String key() {
            return key;
        }

        String label() {
            return name().toLowerCase(Locale.ROOT) + " (" + key + ")";
        }
    }

    /** One namespace of a trace: its prefixes, their length and the law that picks them. */
    record Tenant(String namespace, int weight, int length, int prefixes, double zipf) {}

    /** What one run counted. */
    static final class Tally {
        long queried;
        long ramHits;
        long ssdHits;
        long resavedBytes;
        long scopedQueried;
        long scopedRamHits;

        String row(String trace, Policy policy) {
            return String.format(
                    Locale.ROOT,
                    "| %s | %s | %d | %.1f %% | %.1f %% | %.1f %% | %.2f |",
                    trace,
                    policy.label(),
                    queried,
                    percent(ramHits, queried),
                    percent(ssdHits, queried),
                    percent(queried - ramHits - ssdHits, queried),
                    resavedBytes / (1024.0 * 1024.0));
        }
    }

    private final @Nullable Path ssdDir;
    private final long seed;

    private PolicyTraces(@Nullable Path ssdDir, long seed) {
        this.ssdDir = ssdDir;
        this.seed = seed;
    }

    public static void main(String[] args) throws IOException {
        Path ssd = null;
        Path out = null;
        long seed = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--ssd" -> ssd = Path.of(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                case "--seed" -> seed = Long.parseLong(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
            }
        }
        PolicyTraces traces = new PolicyTraces(ssd, seed);
        StringBuilder table = new StringBuilder();
        table.append(String.format(
                "blocks of %d B, blockwise allocation, eviction batch 64, SSD tier: %s, seed %d%n%n",
                BLOCK_BYTES, ssd == null ? "none" : "4 x the pool", seed));
        table.append("| trace | policy | blocks queried | RAM hits | SSD hits | misses | MiB re-saved |\n");
        table.append("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
        StringBuilder hot = new StringBuilder("\nscan trace, hot set only, rounds 2-5 (decision 0004's measure):");
        for (Policy policy : Policy.values()) {
            Tally t = traces.runScan(policy);
            table.append(t.row("scan", policy)).append('\n');
            hot.append(String.format(
                    Locale.ROOT, " %s %.1f %%;", policy.label(), percent(t.scopedRamHits, t.scopedQueried)));
        }
        List<Tenant> zipf = List.of(new Tenant("zipf", 1, 8, 2000, 0.9));
        for (Policy policy : Policy.values()) {
            table.append(traces.runMix(policy, zipf, 1024, 4000, 11 + seed).row("zipf", policy))
                    .append('\n');
        }
        List<Tenant> tenants = List.of(
                new Tenant("chat", 5, 8, 200, 1.2),
                new Tenant("rag", 3, 16, 1500, 0.6),
                new Tenant("batch", 2, 32, Integer.MAX_VALUE, 0));
        for (Policy policy : Policy.values()) {
            table.append(traces.runMix(policy, tenants, 1024, 4000, 23 + seed).row("tenants", policy))
                    .append('\n');
        }
        table.append(hot).append('\n');
        System.out.print(table);
        if (out != null) {
            Files.writeString(out, table);
        }
    }

    private static double percent(long part, long whole) {
        return whole == 0 ? 0 : 100.0 * part / whole;
    }

    /** Decision 0004's trace. */
    Tally runScan(Policy policy) throws IOException {
        Tally tally = new Tally();
        try (Rig rig = new Rig(policy, 512, List.of("scan"))) {
            BlockContent content = new BlockContent(4 + seed, BLOCK_BYTES, 1, HASH_BYTES);
            for (int round = 0; round < 6; round++) {
                for (int i = 0; i < 256; i++) {
                    long hitsBefore = tally.ramHits;
                    rig.request(0, List.of(content.hash(0, i)), tally);
                    if (round >= 2) {
                        tally.scopedQueried++;
                        tally.scopedRamHits += tally.ramHits - hitsBefore;
                    }
                }
                List<byte[]> scan = new ArrayList<>(1024);
                for (int i = 0; i < 1024; i++) {
                    scan.add(content.hash(1 + round, i));
                }
                rig.save(0, scan);
            }
        }
        return tally;
    }

    /** Requests drawn from {@code tenants} by weight, each tenant's prefix by its Zipf law. */
    Tally runMix(Policy policy, List<Tenant> tenants, int poolBlocks, int requests, long seed) throws IOException {
        Tally tally = new Tally();
        List<String> namespaces = tenants.stream().map(Tenant::namespace).toList();
        try (Rig rig = new Rig(policy, poolBlocks, namespaces)) {
            SplittableRandom random = new SplittableRandom(seed);
            List<Zipf> laws = new ArrayList<>();
            long[] fresh = new long[tenants.size()];
            int totalWeight = 0;
            for (Tenant t : tenants) {
                laws.add(t.prefixes() == Integer.MAX_VALUE ? new Zipf(1, 0) : new Zipf(t.prefixes(), t.zipf()));
                totalWeight += t.weight();
            }
            BlockContent content = new BlockContent(seed, BLOCK_BYTES, 1, HASH_BYTES);
            for (int r = 0; r < requests; r++) {
                int pick = random.nextInt(totalWeight);
                int tenant = 0;
                while (pick >= tenants.get(tenant).weight()) {
                    pick -= tenants.get(tenant).weight();
                    tenant++;
                }
                Tenant t = tenants.get(tenant);
                long prefix = t.prefixes() == Integer.MAX_VALUE
                        ? (1L << 40) + fresh[tenant]++
                        : laws.get(tenant).sample(random);
                List<byte[]> hashes = new ArrayList<>(t.length());
                for (int j = 0; j < t.length(); j++) {
                    hashes.add(content.hash(prefix * 8 + tenant, j));
                }
                rig.request(tenant, hashes, tally);
            }
        }
        return tally;
    }

    /** One engine with one instance per namespace, and the bookkeeping of which blocks were ever saved. */
    private final class Rig implements AutoCloseable {
        private final PegaEngine engine;
        private final @Nullable SsdStore store;
        private final List<String> namespaces;
        private final List<ShmDeviceMemory> devices = new ArrayList<>();
        private final Set<BlockKey> everSaved = new HashSet<>();
        private long requestIds;

        Rig(Policy policy, int poolBlocks, List<String> namespaces) throws IOException {
            this.namespaces = namespaces;
            long poolBytes = (long) poolBlocks * BLOCK_BYTES;
            PinnedMemoryPool pool = PinnedMemoryPool.create(
                    new PoolConfig(poolBytes, 1, false, PoolConfig.NO_NUMA_NODE, BLOCK_BYTES, 0));
            EngineConfig config = EngineConfig.defaults(pool.config())
                    .withBlockwiseAlloc(true)
                    .withHostAlignmentBytes(512)
                    .withAdmission(policy.key());
            EngineContext context =
                    new EngineContext().config(config).pool(pool).backend(new HostDeviceBackend());
            if (ssdDir != null) {
                Path dir = Files.createTempDirectory(ssdDir, "policy-traces");
                SsdStore s = SsdStore.open(SsdConfig.of(List.of(dir.resolve("ssd-0.dat")), 4 * poolBytes));
                context.tier(new SsdBackingTier(s, 1024)).spill(s);
                store = s;
            } else {
                store = null;
            }
            engine = PegaEngine.launch(context);
            for (String ns : namespaces) {
                // one device region per instance: a host descriptor belongs to one registration
                ShmDeviceMemory device = ShmDeviceMemory.create((long) DEVICE_BLOCKS * BLOCK_BYTES);
                devices.add(device);
                engine.registerContextBatch(RegisterCommand.inProcess(
                        ns,
                        ns,
                        0,
                        1,
                        1,
                        0,
                        1,
                        0,
                        List.of("layer_0"),
                        List.of(device.descriptor(0, (long) DEVICE_BLOCKS * BLOCK_BYTES)),
                        new long[] {DEVICE_BLOCKS},
                        new long[] {BLOCK_BYTES},
                        new long[] {0},
                        new long[] {1},
                        OptionalInt.of(ProcessUid.current())));
            }
        }

        /** Queries {@code hashes} as one prefix; the part no tier had is saved again. */
        void request(int tenant, List<byte[]> hashes, Tally tally) {
            String ns = namespaces.get(tenant);
            List<BlockKey> keys = hashes.stream().map(h -> new BlockKey(ns, h)).toList();
            boolean[] resident = new boolean[keys.size()];
            engine.cache().markResident(keys, resident);
            int ram = 0;
            while (ram < resident.length && resident[ram]) {
                ram++;
            }
            requestIds++;
            String reqId = "r" + requestIds;
            long deadline = System.nanoTime() + LOAD_DEADLINE_NANOS;
            QueryOutcome q = engine.queryPrefetch(ns, hashes, reqId);
            while (q.loading()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("prefetch still loading after 30 s");
                }
                Thread.onSpinWait();
                q = engine.queryPrefetch(ns, hashes, reqId);
            }
            int hits = (int) q.hitBlocks();
            if (hits > 0) {
                engine.release(q.lease());
            }
            tally.queried += hashes.size();
            tally.ramHits += Math.min(ram, hits);
            tally.ssdHits += Math.max(0, hits - ram);
            List<byte[]> missing = hashes.subList(hits, hashes.size());
            for (int j = hits; j < keys.size(); j++) {
                if (!everSaved.add(keys.get(j))) {
                    tally.resavedBytes += BLOCK_BYTES;
                }
            }
            save(tenant, missing);
        }

        void save(int tenant, List<byte[]> hashes) {
            String ns = namespaces.get(tenant);
            for (int from = 0; from < hashes.size(); from += DEVICE_BLOCKS) {
                List<byte[]> batch = hashes.subList(from, Math.min(hashes.size(), from + DEVICE_BLOCKS));
                int[] ids = new int[batch.size()];
                for (int i = 0; i < ids.length; i++) {
                    ids[i] = i;
                    everSaved.add(new BlockKey(ns, batch.get(i)));
                }
                engine.save(ns, 0, 0, 0, List.of(new LayerSave("layer_0", ids, new ArrayList<>(batch))));
                engine.flushSeals();
            }
            if (store != null) {
                store.flush().join();
            }
        }

        @Override
        public void close() {
            engine.cleanupInstances(null);
            if (store != null) {
                store.close();
            }
            engine.cleanupMemory();
            engine.close();
            devices.forEach(ShmDeviceMemory::close);
        }
    }
}
