package io.pegaflow.metaserver.support;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A real Redis Cluster of three masters and three replicas on loopback, each a {@code redis-server} child process
 * with {@code cluster-enabled yes} and a 1 s {@code cluster-node-timeout}, joined by {@code redis-cli --cluster
 * create}. Skips the calling test when either program is missing. {@link #close()} SIGKILLs every node.
 */
public final class RedisCluster implements AutoCloseable {

    private static final long NODE_TIMEOUT_MS = 1000;

    private final List<RedisServer> nodes;

    private RedisCluster(List<RedisServer> nodes) {
        this.nodes = nodes;
    }

    public static RedisCluster start(Path dir) throws IOException {
        RedisServer.assumeAvailable();
        Assumptions.assumeTrue(RedisServer.executable("redis-cli"), RedisServer.SKIPPED);
        List<RedisServer> nodes = new ArrayList<>();
        RedisCluster cluster = new RedisCluster(nodes);
        try {
            for (int i = 0; i < 6; i++) {
                int port = clusterPort();
                nodes.add(RedisServer.startOnPort(
                        dir,
                        port,
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        dir.resolve("nodes-" + port + ".conf").toAbsolutePath().toString(),
                        "--cluster-node-timeout",
                        Long.toString(NODE_TIMEOUT_MS)));
            }
            List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            for (RedisServer node : nodes) {
                create.add("127.0.0.1:" + node.port());
            }
            create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
            String out = cli(create);
            if (!out.contains("All 16384 slots covered")) {
                throw new IOException("redis-cli --cluster create: " + out);
            }
            cluster.awaitState(30_000);
            return cluster;
        } catch (IOException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /** A port whose cluster bus port (+10000) is also valid and free. */
    private static int clusterPort() throws IOException {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = RedisServer.freePort();
            if (port + 10_000 <= 65_535) {
                try {
                    new ServerSocket(port + 10_000).close();
                    return port;
                } catch (IOException taken) {
                    // try another
                }
            }
        }
        throw new IOException("no free port pair for a cluster node");
    }

    /** {@code redis://127.0.0.1:<port>} of every node, the seeds for {@code pega.metaserver.redis.cluster-uris}. */
    public List<String> uris() {
        return nodes.stream().map(RedisServer::uri).toList();
    }

    /** The nodes that are masters now. */
    public List<RedisServer> masters() throws IOException {
        List<RedisServer> masters = new ArrayList<>();
        for (RedisServer node : nodes) {
            if (node.alive()
                    && cli(List.of("redis-cli", "-p", Integer.toString(node.port()), "role"))
                            .startsWith("master")) {
                masters.add(node);
            }
        }
        return masters;
    }

    /** Waits until every replica of {@code master} acknowledged all it was sent, so killing it loses nothing. */
    public void awaitReplicated(RedisServer master, long timeoutMs) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadline) {
            String info = cli(List.of("redis-cli", "-p", Integer.toString(master.port()), "info", "replication"));
            long masterOffset = -1;
            List<Long> replicaOffsets = new ArrayList<>();
            for (String line : info.split("\n", -1)) {
                String trimmed = line.trim();
                if (trimmed.startsWith("master_repl_offset:")) {
                    masterOffset = Long.parseLong(trimmed.substring("master_repl_offset:".length()));
                } else if (trimmed.startsWith("slave") && trimmed.contains("offset=")) {
                    String offset = trimmed.substring(trimmed.indexOf("offset=") + 7);
                    replicaOffsets.add(Long.parseLong(offset.substring(0, offset.indexOf(','))));
                }
            }
            if (masterOffset >= 0 && !replicaOffsets.isEmpty() && Collections.min(replicaOffsets) == masterOffset) {
                return;
            }
            RedisServer.sleep(50);
        }
        throw new IOException("replicas of port " + master.port() + " did not catch up");
    }

    /** Waits until a live node reports {@code cluster_state:ok}. */
    public void awaitState(long timeoutMs) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadline) {
            boolean ok = true;
            for (RedisServer node : nodes) {
                if (node.alive()
                        && !cli(List.of("redis-cli", "-p", Integer.toString(node.port()), "cluster", "info"))
                                .contains("cluster_state:ok")) {
                    ok = false;
                }
            }
            if (ok) {
                return;
            }
            RedisServer.sleep(100);
        }
        throw new IOException("the Redis Cluster did not reach cluster_state:ok");
    }

    private static String cli(List<String> command) throws IOException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            byte[] out = process.getInputStream().readAllBytes();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException("timed out: " + command);
            }
            return new String(out, StandardCharsets.UTF_8);
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    @Override
    public void close() {
        nodes.forEach(RedisServer::close);
    }
}
