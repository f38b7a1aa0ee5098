package io.pegaflow.it.p2p;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.it.net.NamespacePair;
import io.pegaflow.it.net.Site;
import io.pegaflow.proto.NodePrefixResult;
import io.pegaflow.proto.QueryPrefixBlocksRequest;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.ChildJvm;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LoadResult;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ReferenceHarness;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The end-to-end figure of docs/transfer.md: a remote prefix of 1024 blocks of 64 KiB (64 MiB) fetched by node b from
 * node a, timed from the first {@code QueryPrefetch} to {@code Ready}, against the raw engine's time for the same bytes
 * ({@code TransferThroughput} between two JVMs at the same two sites, 1024 gets of 64 KiB in flight, the same transport
 * and lanes). Across the veth pair where namespaces are allowed, over loopback otherwise. Not a CI test (its name does
 * not end in IT): {@code scripts/bench-remote-prefetch.sh} runs it and prints the table of docs/transfer.md. The first
 * round also loads the blocks into b's worker and checks them byte for byte.
 */
@Timeout(value = 900, unit = TimeUnit.SECONDS)
class RemotePrefetchBench {
    private static final int BLOCKS = 1024;
    private static final int BLOCK_BYTES = 64 * 1024;
    private static final double MIB = 1024.0 * 1024.0;
    private static final String NAMESPACE = "p2p-bench";
    private static final KvLayout LAYOUT = KvLayout.contiguous(BLOCKS, BLOCK_BYTES);
    private static final Duration WAIT = Duration.ofMinutes(2);
    private static final int ROUNDS = Integer.getInteger("pega.bench.rounds", 5);
    private static final int LANES = Integer.getInteger("pega.bench.lanes", 2);
    private static final int RAW_SECONDS = Integer.getInteger("pega.bench.rawSeconds", 5);

    @TempDir
    Path dir;

    @Test
    void remotePrefixAgainstTheRawEngine() throws Exception {
        NamespacePair pair = NamespacePair.unavailable().isEmpty() ? NamespacePair.create() : null;
        try {
            Site a = pair == null ? Site.loopback("a") : Site.sideA(pair);
            Site b = pair == null ? Site.loopback("b") : Site.sideB(pair);
            double rawMiBps = rawEngine(a, b);
            System.out.printf(Locale.ROOT, "raw engine %s -> %s: %.1f MiB/s%n", a, b, rawMiBps);
            List<PrefetchTiming> rounds = endToEnd(a, b);
            report(a, b, rawMiBps, rounds);
        } finally {
            if (pair != null) {
                pair.close();
            }
        }
    }

    /** MiB/s of the engine alone, target at a, initiator at b, four 16 MiB batches (1024 gets of 64 KiB) in flight. */
    private double rawEngine(Site a, Site b) throws Exception {
        String jar = System.getProperty("pega.it.benchmarksJar");
        assertThat(jar).as("pega.it.benchmarksJar (set by the pom)").isNotNull();
        assertThat(Path.of(jar))
                .as("build it: ./mvnw -pl pega-benchmarks -am package")
                .exists();
        Path exchange = Files.createDirectories(dir.resolve("raw"));
        List<String> main = List.of("-cp", jar, "io.pegaflow.bench.transfer.TransferThroughput");
        Map<String, String> env = Map.of("UCX_LOG_LEVEL", "error");
        List<String> targetArgs = new ArrayList<>(main);
        targetArgs.addAll(List.of(
                "target",
                "--dir",
                exchange.toString(),
                "--nics",
                a.device(),
                "--tls",
                "tcp",
                "--lanes",
                Integer.toString(LANES)));
        List<String> initiatorArgs = new ArrayList<>(main);
        initiatorArgs.addAll(List.of(
                "initiator",
                "--dir",
                exchange.toString(),
                "--nics",
                b.device(),
                "--tls",
                "tcp",
                "--lanes",
                Integer.toString(LANES),
                "--sizes",
                Integer.toString(BLOCK_BYTES),
                "--window",
                "4",
                "--seconds",
                Integer.toString(RAW_SECONDS)));
        try (ChildJvm target = ChildJvm.start(
                        "raw-target",
                        dir,
                        a.wrapper(),
                        env,
                        targetArgs,
                        () -> Files.exists(exchange.resolve("target.desc")));
                ChildJvm initiator =
                        ChildJvm.start("raw-initiator", dir, b.wrapper(), env, initiatorArgs, () -> true)) {
            int status = initiator.awaitExit(Duration.ofSeconds(RAW_SECONDS + 120L));
            assertThat(status)
                    .as("initiator: %s\ntarget: %s", initiator.logText(), target.logText())
                    .isZero();
            Matcher m = Pattern.compile("(?m)^tcp," + LANES + "," + BLOCK_BYTES + ",([0-9.]+),(\\d+)$")
                    .matcher(initiator.logText());
            assertThat(m.find())
                    .as("initiator's CSV line in: %s", initiator.logText())
                    .isTrue();
            target.awaitExit(Duration.ofSeconds(30));
            return Double.parseDouble(m.group(1));
        }
    }

    private static List<Integer> allBlocks() {
        return ReferenceHarness.blockIds(BLOCKS);
    }

    private List<PrefetchTiming> endToEnd(Site a, Site b) throws Exception {
        List<PrefetchTiming> rounds = new ArrayList<>();
        try (TwoNodeCluster cluster = TwoNodeCluster.start(
                        dir,
                        a,
                        b,
                        site -> List.of(
                                "--pega.pool.size=320MB",
                                "--pega.rdma.enabled=true",
                                "--pega.rdma.nics=" + site.device(),
                                "--pega.rdma.transports=tcp",
                                "--pega.rdma.qps-per-peer=" + LANES,
                                "--pega.admin.token=" + NodeHttp.ADMIN_TOKEN));
                MockVllmWorker owner = worker(cluster.a(), "bench-owner");
                MockVllmWorker reader = worker(cluster.b(), "bench-reader");
                MockScheduler ownerScheduler =
                        MockScheduler.connect("127.0.0.1", cluster.a().localGrpc());
                MockScheduler readerScheduler =
                        MockScheduler.connect("127.0.0.1", cluster.b().localGrpc())) {
            BlockPattern pattern = BlockPattern.perByte(31_337);
            owner.fillBlocks(allBlocks(), pattern);
            for (int r = 0; r < ROUNDS; r++) {
                List<ByteString> hashes = BlockPattern.hashes(31_000 + r, BLOCKS);
                owner.save(allBlocks(), hashes);
                ownerScheduler.awaitSealed(owner.instanceId(), hashes, WAIT);
                awaitOwner(cluster, hashes);
                PrefetchTiming t =
                        PrefetchTiming.untilReady(readerScheduler, reader.instanceId(), hashes, "bench-" + r, WAIT);
                assertThat(t.ready().getNumHitBlocks())
                        .as("round %d: Ready after %d Loading answers%s", r, t.loadingAnswers(), cluster.logs())
                        .isEqualTo(BLOCKS);
                if (r == 0) {
                    reader.zeroBlocks(allBlocks());
                    LoadResult load = reader.load(t.ready().getLease(), allBlocks(), WAIT);
                    assertThat(load.succeeded()).as("load: %s", load).isTrue();
                    reader.verifyBlocks(allBlocks(), pattern);
                } else {
                    readerScheduler.release(t.ready().getLease());
                }
                rounds.add(t);
                // Both pools start the next round empty, so every round is a full remote fetch.
                NodeHttp.adminPost(cluster.b(), "/cache/memory/cleanup");
                NodeHttp.adminPost(cluster.a(), "/cache/memory/cleanup");
            }
        }
        return rounds;
    }

    private MockVllmWorker worker(TwoNodeCluster.Node node, String instanceId) {
        MockVllmWorker w = MockVllmWorker.builder("127.0.0.1", node.localGrpc())
                .instanceId(instanceId)
                .namespace(NAMESPACE)
                .layer("layer_0", LAYOUT)
                .loadTimeout(WAIT)
                .build();
        w.register();
        return w;
    }

    /** Waits until the metaserver names node a as the owner of the whole prefix. */
    private static void awaitOwner(TwoNodeCluster cluster, List<ByteString> hashes) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            List<NodePrefixResult> nodes = cluster.metaserverStub()
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .queryPrefixBlocks(QueryPrefixBlocksRequest.newBuilder()
                            .setNamespace(NAMESPACE)
                            .addAllBlockHashes(hashes)
                            .build())
                    .getNodesList();
            if (nodes.stream()
                    .anyMatch(n -> n.getNode().equals(cluster.a().advertised()) && n.getPrefixLen() == BLOCKS)) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        throw new AssertionError("node a never owned the whole prefix in the metaserver" + cluster.logs());
    }

    private void report(Site a, Site b, double rawMiBps, List<PrefetchTiming> rounds) throws IOException {
        double bytes = (double) BLOCKS * BLOCK_BYTES;
        double rawMs = bytes / MIB / rawMiBps * 1000;
        double[] ms =
                rounds.stream().mapToDouble(PrefetchTiming::millis).sorted().toArray();
        double median = ms[ms.length / 2];
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.ROOT,
                "# %s, %d cores, load %s, %s -> %s, UCX tcp, %d lanes, %d blocks x %d KiB = %.0f MiB%n",
                Instant.now(),
                Runtime.getRuntime().availableProcessors(),
                Files.readString(Path.of("/proc/loadavg")).strip(),
                a,
                b,
                LANES,
                BLOCKS,
                BLOCK_BYTES / 1024,
                bytes / MIB));
        out.append("| measure | time (ms) | MiB/s |\n|---|---:|---:|\n");
        out.append(String.format(Locale.ROOT, "| raw engine (1024 gets in flight) | %.1f | %.1f |%n", rawMs, rawMiBps));
        out.append(String.format(
                Locale.ROOT,
                "| QueryPrefetch -> Ready, median of %d | %.1f | %.1f |%n",
                ms.length,
                median,
                bytes / MIB / (median / 1000)));
        out.append(String.format(
                Locale.ROOT, "| QueryPrefetch -> Ready, best | %.1f | %.1f |%n", ms[0], bytes / MIB / (ms[0] / 1000)));
        out.append(String.format(
                Locale.ROOT,
                "rounds (ms): %s; end to end / raw (median): %.2f%n",
                Arrays.toString(
                        rounds.stream().mapToDouble(PrefetchTiming::millis).toArray()),
                median / rawMs));
        String text = out.toString();
        System.out.println(text);
        Path file = Path.of(System.getProperty("pega.it.repo", ".."), "pega-it", "target", "remote-prefetch-bench.md");
        Files.createDirectories(file.getParent());
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }
}
