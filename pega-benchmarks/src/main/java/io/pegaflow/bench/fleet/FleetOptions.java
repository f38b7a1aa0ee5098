package io.pegaflow.bench.fleet;

import io.pegaflow.bench.cli.CommandLines;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Command-line options of {@link FleetSimulator}, parsed by picocli without I/O ({@link CommandLines}); {@link #parse}
 * checks every range and names the option it refuses. Durations are {@link CommandLines#parseDuration}'s.
 */
@Command(
        name = "FleetSimulator",
        customSynopsis = {
            "java -cp pega-benchmarks/target/benchmarks.jar io.pegaflow.bench.fleet.FleetSimulator --targets H:P[,H:P...] [options]"
        },
        description = {
            "",
            "N simulated PegaFlow servers speak the metaserver protocol as pega-server does (heartbeat, batched",
            "Insert/Remove through a bounded queue, QueryPrefixBlocks per request, re-announcement on a new epoch)",
            "at rates derived from a prefill model, with bursts and crashes followed by fenced re-joins.",
            ""
        },
        sortOptions = false,
        mixinStandardHelpOptions = true)
final class FleetOptions {

    @Option(names = "--targets", required = true, split = ",", description = "metaserver gRPC addresses host:port")
    List<String> targets = new ArrayList<>();

    @Option(
            names = "--metrics",
            split = ",",
            description = "metaserver HTTP bases (http://host:port) to scrape /metrics from, in --targets order")
    List<String> metrics = new ArrayList<>();

    @Option(
            names = "--gc-pids",
            split = ",",
            description = "local metaserver pids: jcmd GC.run before each heap reading, for memory per block")
    List<Long> gcPids = new ArrayList<>();

    @Option(names = "--nodes", description = "simulated servers (default ${DEFAULT-VALUE})")
    int nodes = 100;

    @Option(names = "--gpus-per-node", description = "GPUs per server (default ${DEFAULT-VALUE})")
    int gpusPerNode = 8;

    @Option(
            names = "--prefill-tokens-per-gpu",
            description = "prefill tokens/s one GPU computes (default ${DEFAULT-VALUE})")
    double prefillTokensPerGpu = 250;

    @Option(names = "--block-tokens", description = "tokens per KV block (default ${DEFAULT-VALUE})")
    int blockTokens = 16;

    @Option(names = "--prompt-tokens", description = "tokens per request prompt (default ${DEFAULT-VALUE})")
    int promptTokens = 2048;

    @Option(
            names = "--shared-fraction",
            description = "share of a prompt that is a fleet-wide shared prefix (default ${DEFAULT-VALUE})")
    double sharedFraction = 0.5;

    @Option(names = "--prefixes", description = "distinct shared prefixes (default ${DEFAULT-VALUE})")
    int prefixes = 1000;

    @Option(names = "--zipf", description = "Zipf exponent of prefix popularity (default ${DEFAULT-VALUE})")
    double zipf = 1.0;

    @Option(names = "--queries-per-request", description = "QueryPrefixBlocks per request (default ${DEFAULT-VALUE})")
    int queriesPerRequest = 1;

    @Option(
            names = "--resident-blocks",
            description = "blocks a server keeps before evicting its oldest (default ${DEFAULT-VALUE})")
    int residentBlocks = 2048;

    @Option(names = "--burst-every", description = "period of fleet-wide bursts, 0 for none (default ${DEFAULT-VALUE})")
    String burstEvery = "20s";

    @Option(names = "--burst-length", description = "length of each burst (default ${DEFAULT-VALUE})")
    String burstLength = "2s";

    @Option(names = "--burst-factor", description = "request rate multiplier during a burst (default ${DEFAULT-VALUE})")
    double burstFactor = 4;

    @Option(
            names = "--crash-every",
            description = "one random server crashes this often, 0 for never (default ${DEFAULT-VALUE})")
    String crashEvery = "10s";

    @Option(
            names = "--crash-downtime",
            description = "a crashed server restarts with a new node_id after this (default ${DEFAULT-VALUE})")
    String crashDowntime = "1s";

    @Option(names = "--warmup", description = "joins and cache filling, not measured (default ${DEFAULT-VALUE})")
    String warmup = "10s";

    @Option(names = "--duration", description = "measured time (default ${DEFAULT-VALUE})")
    String duration = "60s";

    @Option(names = "--queue-depth", description = "announcement batches a server queues (default ${DEFAULT-VALUE})")
    int queueDepth = 256;

    @Option(names = "--batch-size", description = "most hashes per Insert/Remove (default ${DEFAULT-VALUE})")
    int batchSize = 1024;

    @Option(names = "--rpc-timeout", description = "deadline of every call (default ${DEFAULT-VALUE})")
    String rpcTimeout = "5s";

    @Option(names = "--channels", description = "gRPC channels per target (default ${DEFAULT-VALUE})")
    int channels = 4;

    @Option(
            names = "--unregister-sample",
            description = "servers that unregister at the end, evenly spread; each checks its removed count, and"
                    + " UnregisterNode scans the whole index (default ${DEFAULT-VALUE})")
    int unregisterSample = 20;

    @Option(names = "--namespace", description = "namespace of every block (default ${DEFAULT-VALUE})")
    String namespace = "fleet";

    @Option(names = "--seed", description = "random seed (default ${DEFAULT-VALUE})")
    long seed = 42;

    @Option(names = "--report", description = "Markdown report file")
    String reportPath = "";

    @Option(names = "--json", description = "JSON report file")
    String jsonPath = "";

    @Option(names = "--plot", description = "SVG plot file")
    String plotPath = "";

    /**
     * Parses and validates; throws {@link IllegalArgumentException} naming the option, or
     * {@link CommandLines.HelpRequested} for {@code --help}.
     */
    static FleetOptions parse(String... args) {
        FleetOptions o = CommandLines.parse(new FleetOptions(), args);
        o.validate();
        return o;
    }

    private void validate() {
        for (String t : targets) {
            int colon = t.lastIndexOf(':');
            if (colon <= 0 || !t.substring(colon + 1).matches("[0-9]{1,5}")) {
                throw new IllegalArgumentException("--targets: expected host:port, got " + t);
            }
        }
        require(!targets.isEmpty(), "--targets", "at least one address");
        require(metrics.isEmpty() || metrics.size() == targets.size(), "--metrics", "one per target or none");
        require(nodes >= 1 && nodes <= 65_535, "--nodes", "1..65535");
        require(gpusPerNode >= 1, "--gpus-per-node", ">= 1");
        require(prefillTokensPerGpu > 0, "--prefill-tokens-per-gpu", "> 0");
        require(blockTokens >= 1, "--block-tokens", ">= 1");
        require(promptTokens >= blockTokens, "--prompt-tokens", ">= --block-tokens");
        require(sharedFraction >= 0 && sharedFraction <= 1, "--shared-fraction", "0..1");
        require(prefixes >= 1, "--prefixes", ">= 1");
        require(queriesPerRequest >= 0, "--queries-per-request", ">= 0");
        require(residentBlocks >= model().blocksPerRequest(), "--resident-blocks", ">= blocks per request");
        require(burstFactor >= 1, "--burst-factor", ">= 1");
        require(queueDepth >= 1, "--queue-depth", ">= 1");
        require(batchSize >= 1, "--batch-size", ">= 1");
        require(channels >= 1, "--channels", ">= 1");
        require(unregisterSample >= 0, "--unregister-sample", ">= 0");
        require(!duration().isZero(), "--duration", "> 0");
        require(!rpcTimeoutDuration().isZero(), "--rpc-timeout", "> 0");
        burstEveryDuration();
        burstLengthDuration();
        crashEveryDuration();
        crashDowntimeDuration();
        warmupDuration();
    }

    private static void require(boolean ok, String option, String expected) {
        if (!ok) {
            throw new IllegalArgumentException(option + ": expected " + expected);
        }
    }

    FleetModel model() {
        return FleetModel.of(gpusPerNode, prefillTokensPerGpu, blockTokens, promptTokens, sharedFraction);
    }

    Duration duration() {
        return parseDuration("--duration", duration);
    }

    Duration warmupDuration() {
        return parseDuration("--warmup", warmup);
    }

    Duration burstEveryDuration() {
        return parseDuration("--burst-every", burstEvery);
    }

    Duration burstLengthDuration() {
        return parseDuration("--burst-length", burstLength);
    }

    Duration crashEveryDuration() {
        return parseDuration("--crash-every", crashEvery);
    }

    Duration crashDowntimeDuration() {
        return parseDuration("--crash-downtime", crashDowntime);
    }

    Duration rpcTimeoutDuration() {
        return parseDuration("--rpc-timeout", rpcTimeout);
    }

    static Duration parseDuration(String option, String text) {
        try {
            return CommandLines.parseDuration(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + ": " + e.getMessage(), e);
        }
    }
}
