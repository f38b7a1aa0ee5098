package io.pegaflow.bench.link;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What {@link LinkBench} drives: the instance another process registered and the shape of its requests.
 *
 * @param host the server's gRPC host
 * @param port the server's gRPC port
 * @param instanceId the registered instance (device 0, tp rank 0)
 * @param layerNames the layers every Save and Load names, in order
 * @param blocks the block ids each layer holds: ids are drawn from {@code [0, blocks)}
 * @param count blocks per Save and Load
 * @param runs measured runs after the first one (the first is reported apart: a cold Save when nothing was saved
 *     since registration)
 * @param seed the block-id generator's seed
 * @param salt what the block hashes are made of (a fresh hash per run and block)
 * @param timeoutSeconds the deadline of each RPC, of polling a query and of waiting for a Load
 * @param metricsUrl the server's Prometheus page, read before the first measured run and after the last (the
 *     server's own phase timers over exactly the measured runs); empty: not read
 * @param writeBufferBytes the channel's socket send buffer and Netty's write-buffer high-water mark, in bytes; 0 keeps
 *     Netty's defaults (a 64 KiB mark, above which Netty hands the socket no more of a request until it drained)
 * @param warmup unmeasured Save, QueryPrefetch and Load cycles between the cold first run and the measured ones
 * @param warmQueries QueryPrefetch calls (each lease released) per warm-up cycle, and as many times {@code warmup}
 *     misses before the cold first run
 */
public record LinkOptions(
        String host,
        int port,
        String instanceId,
        List<String> layerNames,
        int blocks,
        int count,
        int runs,
        long seed,
        String salt,
        int timeoutSeconds,
        String metricsUrl,
        int writeBufferBytes,
        int warmup,
        int warmQueries) {

    public LinkOptions {
        layerNames = List.copyOf(layerNames);
        if (layerNames.isEmpty()
                || blocks <= 0
                || count <= 0
                || count > blocks
                || runs < 0
                || timeoutSeconds <= 0
                || writeBufferBytes < 0
                || warmup < 0
                || warmQueries < 0) {
            throw new IllegalArgumentException(
                    "need layers, 0 < count <= blocks, runs >= 0, timeout > 0, warm-up >= 0: "
                            + layerNames.size() + " layers, count " + count + ", blocks " + blocks + ", runs " + runs
                            + ", warm-up " + warmup + " cycles of " + warmQueries + " queries");
        }
    }

    static final String USAGE = "usage: LinkBench --addr HOST:PORT --instance ID --layers NAME[,NAME...] --blocks N"
            + " --count C [--runs R (3)] [--seed S (20261201)] [--salt TEXT (instance id)] [--timeout SECONDS (60)]"
            + " [--http HOST:PORT (the server's HTTP port: its phase timers go into the report)] [--out FILE.json]"
            + " [--write-buffer BYTES (0: Netty's)] [--warmup CYCLES (10)] [--warm-queries N (200)]";

    /** Parses {@code --key value} pairs; {@code out} receives the {@code --out} path (empty when absent). */
    static LinkOptions parse(String[] args, List<String> out) {
        String addr = null;
        String instance = null;
        List<String> layers = new ArrayList<>();
        int blocks = 0;
        int count = 0;
        int runs = 3;
        long seed = 20261201L;
        String salt = null;
        int timeout = 60;
        String http = "";
        int writeBuffer = 0;
        int warmup = 10;
        int warmQueries = 200;
        for (int i = 0; i + 1 < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--addr" -> addr = v;
                case "--instance" -> instance = v;
                case "--layers" -> layers = Arrays.asList(v.split(","));
                case "--blocks" -> blocks = Integer.parseInt(v);
                case "--count" -> count = Integer.parseInt(v);
                case "--runs" -> runs = Integer.parseInt(v);
                case "--seed" -> seed = Long.parseLong(v);
                case "--salt" -> salt = v;
                case "--timeout" -> timeout = Integer.parseInt(v);
                case "--http" -> http = "http://" + v + "/actuator/prometheus";
                case "--out" -> out.add(v);
                case "--write-buffer" -> writeBuffer = Integer.parseInt(v);
                case "--warmup" -> warmup = Integer.parseInt(v);
                case "--warm-queries" -> warmQueries = Integer.parseInt(v);
                default -> throw new IllegalArgumentException("unknown option " + args[i] + "\n" + USAGE);
            }
        }
        if (args.length % 2 != 0 || addr == null || instance == null || addr.lastIndexOf(':') < 0) {
            throw new IllegalArgumentException(USAGE);
        }
        int colon = addr.lastIndexOf(':');
        return new LinkOptions(
                addr.substring(0, colon),
                Integer.parseInt(addr.substring(colon + 1)),
                instance,
                layers,
                blocks,
                count,
                runs,
                seed,
                salt == null ? instance : salt,
                timeout,
                http,
                writeBuffer,
                warmup,
                warmQueries);
    }
}
