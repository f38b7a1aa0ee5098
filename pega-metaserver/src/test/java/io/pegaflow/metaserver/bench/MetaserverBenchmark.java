package io.pegaflow.metaserver.bench;

import com.google.protobuf.ByteString;
import io.pegaflow.metaserver.grpc.Requests;
import io.pegaflow.metaserver.index.MetaStore;
import io.pegaflow.metaserver.index.PrefixMatch;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.proto.InsertBlockHashesRequest;
import io.pegaflow.proto.MetaServerGrpc.MetaServerBlockingStub;
import io.pegaflow.proto.QueryPrefixBlocksRequest;
import io.pegaflow.proto.QueryPrefixBlocksResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.HdrHistogram.Histogram;

/**
 * Load generator for the numbers in docs/metaserver.md: InsertBlockHashes throughput in batches of 1024 and
 * QueryPrefixBlocks latency for 32768 hashes owned by 8 nodes, end to end over gRPC on loopback against the real
 * Spring application (H2 file database), plus the same query on the in-process {@link MetaStore} without gRPC.
 * Not a unit test; run it on demand:
 *
 * <pre>
 * ./mvnw -q -B -ntp -pl pega-metaserver test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.pegaflow.metaserver.bench.MetaserverBenchmark [-Dexec.args="queries=500 rounds=3"]
 * </pre>
 */
public final class MetaserverBenchmark {

    static final int NODES = 8;
    static final int QUERY_HASHES = 32_768;
    static final int BATCH = 1_024;
    static final String NS = "bench-ns";

    public static void main(String[] args) throws Exception {
        int queries = intArg(args, "queries", 300);
        int rounds = intArg(args, "rounds", 3);
        Path dir = Files.createTempDirectory("metaserver-bench");
        System.out.printf(
                Locale.ROOT,
                "JDK %s, %d cores, heap max %d MiB%n",
                Runtime.version(),
                Runtime.getRuntime().availableProcessors(),
                Runtime.getRuntime().maxMemory() >> 20);
        // Stale-after is raised so the nodes stay visible for the whole run without a heartbeat thread.
        try (MetaserverTestApp app = MetaserverTestApp.start(
                dir,
                Clock.systemUTC(),
                "--pega.metaserver.node-stale-secs=3600",
                "--logging.level.io.pegaflow=warn",
                "--logging.level.root=warn")) {
            MetaServerBlockingStub stub = app.stub();
            List<String> nodes = new ArrayList<>();
            List<UUID> ids = new ArrayList<>();
            for (int n = 0; n < NODES; n++) {
                nodes.add("10.0.0." + (n + 1) + ":50055");
                ids.add(UUID.randomUUID());
                stub.heartbeatNode(Requests.heartbeat(nodes.get(n), ids.get(n)));
            }
            List<ByteString> hashes = new ArrayList<>(QUERY_HASHES);
            for (int i = 0; i < QUERY_HASHES; i++) {
                hashes.add(Requests.h(i));
            }
            for (int round = 1; round <= rounds; round++) {
                insertSequential(stub, nodes, ids, hashes, round);
                insertConcurrent(app, nodes, ids, hashes, round);
            }
            QueryPrefixBlocksRequest query = QueryPrefixBlocksRequest.newBuilder()
                    .setNamespace(NS)
                    .addAllBlockHashes(hashes)
                    .build();
            System.out.printf(Locale.ROOT, "query request size %d bytes%n", query.getSerializedSize());
            check(stub.queryPrefixBlocks(query));
            for (int round = 1; round <= rounds; round++) {
                report("QueryPrefixBlocks gRPC   round " + round, timeGrpc(stub, query, queries));
            }
            MetaStore store = app.bean(MetaStore.class);
            for (int round = 1; round <= rounds; round++) {
                report("MetaStore.queryPrefix    round " + round, timeInProcess(store, hashes, queries));
            }
        }
    }

    /** One client thread, 8 nodes x 32 batches of 1024 = 262144 hashes. */
    static void insertSequential(
            MetaServerBlockingStub stub, List<String> nodes, List<UUID> ids, List<ByteString> hashes, int round) {
        List<InsertBlockHashesRequest> batches = batches(nodes, ids, hashes);
        long start = System.nanoTime();
        for (InsertBlockHashesRequest batch : batches) {
            stub.insertBlockHashes(batch);
        }
        printInsertRate("sequential (1 client)", round, batches.size(), System.nanoTime() - start);
    }

    /** One client thread per node, each on its own channel's stub, sharing the server. */
    static void insertConcurrent(
            MetaserverTestApp app, List<String> nodes, List<UUID> ids, List<ByteString> hashes, int round)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(NODES);
        try {
            List<List<InsertBlockHashesRequest>> perNode = new ArrayList<>();
            for (int n = 0; n < NODES; n++) {
                perNode.add(batches(List.of(nodes.get(n)), List.of(ids.get(n)), hashes));
            }
            long start = System.nanoTime();
            List<Future<?>> done = new ArrayList<>();
            for (List<InsertBlockHashesRequest> mine : perNode) {
                MetaServerBlockingStub stub = app.stub();
                done.add(pool.submit(() -> mine.forEach(stub::insertBlockHashes)));
            }
            for (Future<?> f : done) {
                f.get();
            }
            printInsertRate(
                    "concurrent (8 clients)", round, NODES * perNode.get(0).size(), System.nanoTime() - start);
        } finally {
            pool.shutdownNow();
        }
    }

    static List<InsertBlockHashesRequest> batches(List<String> nodes, List<UUID> ids, List<ByteString> hashes) {
        List<InsertBlockHashesRequest> out = new ArrayList<>();
        for (int n = 0; n < nodes.size(); n++) {
            for (int from = 0; from < hashes.size(); from += BATCH) {
                out.add(InsertBlockHashesRequest.newBuilder()
                        .setNamespace(NS)
                        .setNode(nodes.get(n))
                        .setNodeId(ids.get(n).toString())
                        .addAllBlockHashes(hashes.subList(from, Math.min(from + BATCH, hashes.size())))
                        .build());
            }
        }
        return out;
    }

    static void printInsertRate(String mode, int round, int batches, long elapsedNs) {
        double seconds = elapsedNs / 1e9;
        System.out.printf(
                Locale.ROOT,
                "InsertBlockHashes %-22s round %d: %d batches of %d in %.3f s = %.0f batches/s, %.0f hashes/s%n",
                mode,
                round,
                batches,
                BATCH,
                seconds,
                batches / seconds,
                batches * (double) BATCH / seconds);
    }

    static Histogram timeGrpc(MetaServerBlockingStub stub, QueryPrefixBlocksRequest query, int count) {
        Histogram histogram = new Histogram(3);
        for (int i = 0; i < count; i++) {
            long start = System.nanoTime();
            QueryPrefixBlocksResponse response = stub.queryPrefixBlocks(query);
            histogram.recordValue((System.nanoTime() - start) / 1_000);
            if (response.getNodesCount() != NODES) {
                throw new IllegalStateException("expected " + NODES + " nodes, got " + response);
            }
        }
        return histogram;
    }

    static Histogram timeInProcess(MetaStore store, List<ByteString> hashes, int count) {
        Histogram histogram = new Histogram(3);
        for (int i = 0; i < count; i++) {
            long start = System.nanoTime();
            List<PrefixMatch> matches = store.queryPrefix(NS, hashes);
            histogram.recordValue((System.nanoTime() - start) / 1_000);
            if (matches.size() != NODES) {
                throw new IllegalStateException("expected " + NODES + " nodes, got " + matches);
            }
        }
        return histogram;
    }

    static void check(QueryPrefixBlocksResponse response) {
        if (response.getNodesCount() != NODES
                || response.getNodesList().stream().anyMatch(n -> n.getPrefixLen() != QUERY_HASHES)) {
            throw new IllegalStateException("unexpected query result: " + response.getNodesList());
        }
    }

    static void report(String what, Histogram h) {
        System.out.printf(
                Locale.ROOT,
                "%s: n=%d p50=%.2f ms p90=%.2f ms p99=%.2f ms max=%.2f ms mean=%.2f ms%n",
                what,
                h.getTotalCount(),
                h.getValueAtPercentile(50) / 1e3,
                h.getValueAtPercentile(90) / 1e3,
                h.getValueAtPercentile(99) / 1e3,
                h.getMaxValue() / 1e3,
                h.getMean() / 1e3);
    }

    static int intArg(String[] args, String name, int fallback) {
        for (String arg : args) {
            if (arg.startsWith(name + "=")) {
                return Integer.parseInt(arg.substring(name.length() + 1));
            }
        }
        return fallback;
    }
}
