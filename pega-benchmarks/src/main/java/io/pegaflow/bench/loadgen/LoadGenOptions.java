package io.pegaflow.bench.loadgen;

import io.pegaflow.bench.cli.CommandLines;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;

/**
 * Command-line options of {@link LoadGenerator}, parsed by picocli; parsing is pure (no I/O) so it is unit-tested, and
 * every rejected value is named in the message. Sizes take the units the server takes ({@code 64KiB} and {@code 64KB}
 * are both 65536 bytes), durations {@code ms}, {@code s}, {@code m}, {@code h}.
 */
record LoadGenOptions(
        String host,
        int port,
        String scenario,
        int workers,
        Duration duration,
        long ops,
        Duration warmup,
        OpMix mix,
        long blockBytes,
        int blocksPerRequest,
        int prefixes,
        double zipfExponent,
        int layers,
        double rate,
        boolean verify,
        String namespace,
        String instancePrefix,
        long seed,
        int hashBytes,
        String jsonPath,
        String plotPath,
        boolean progress,
        String adminUrl,
        String adminToken,
        int e2eQueryBlocks,
        int e2eSaveBlocks,
        int e2eReps,
        Duration rpcTimeout,
        Duration loadTimeout) {

    /** The environment variable that supplies {@code --admin-token}, the one the server reads as pega.admin.token. */
    static final String ADMIN_TOKEN_ENV = "PEGA_ADMIN_TOKEN";

    /** The server's default gRPC address (spring.grpc.server.host and port in pega-server.jar). */
    static final String DEFAULT_TARGET = "127.0.0.1:50055";

    /** The option fields picocli fills; {@link #parse} checks ranges and builds the record. */
    @Command(
            name = "LoadGenerator",
            customSynopsis = {
                "java -cp pega-benchmarks/target/benchmarks.jar io.pegaflow.bench.loadgen.LoadGenerator [options]"
            },
            description = {
                "",
                "Simulated vLLM workers on the host backend (device memory in /dev/shm, so run it on the server's",
                "machine) drive Save, QueryPrefetch and Load over gRPC with shared prefixes drawn from a Zipf law,",
                "verify loaded bytes, and report throughput, HdrHistogram latency percentiles, hit rate, errors,",
                "Loading polls and the time spent backing off while the server was UNAVAILABLE.",
                ""
            },
            footer = {
                "",
                "Example, against a server started with the README's command:",
                "  java -cp pega-benchmarks/target/benchmarks.jar io.pegaflow.bench.loadgen.LoadGenerator \\",
                "      --target 127.0.0.1:50055 --workers 4 --duration 30s --json out.json --plot out.svg",
                "Exit status: 0 when every operation succeeded and every loaded byte matched, 1 otherwise, 2 for bad",
                "options."
            },
            sortOptions = false,
            usageHelpWidth = 120)
    static final class Cli {
        @Option(
                names = "--target",
                paramLabel = "HOST:PORT",
                description = "the server's gRPC address (default ${DEFAULT-VALUE})")
        String target = DEFAULT_TARGET;

        @Option(
                names = "--scenario",
                paramLabel = "mix|e2e",
                description = {
                    "mix: the workload below (default); e2e: fixed end-to-end figures (Save and Load of",
                    "--e2e-save-blocks x --block-size, QueryPrefetch of --e2e-query-blocks all-hit hashes of 1 KiB",
                    "blocks), --e2e-reps each"
                })
        String scenario = "mix";

        @Option(
                names = "--workers",
                paramLabel = "N",
                description = "simulated workers, one instance and one thread each (default ${DEFAULT-VALUE})")
        int workers = 4;

        @Option(
                names = "--duration",
                paramLabel = "D",
                converter = CommandLines.DurationConverter.class,
                description = "how long to run, e.g. 30s, 2m (default 30s)")
        Duration duration = Duration.ofSeconds(30);

        @Option(
                names = "--ops",
                paramLabel = "N",
                description = "stop after N operations in total instead (default: by duration)")
        long ops = 0;

        @Option(
                names = "--warmup",
                paramLabel = "D",
                converter = CommandLines.DurationConverter.class,
                description = "run this long first without recording (default 0s)")
        Duration warmup = Duration.ZERO;

        @Option(
                names = "--mix",
                paramLabel = "SPEC",
                description = {
                    "op=weight list of save, query, load, request (default request=1);",
                    "request = query, load the hits, save the missing suffix"
                })
        String mix = "request=1";

        @Option(
                names = "--block-size",
                paramLabel = "SIZE",
                converter = SizeConverter.class,
                description = "bytes per block and layer, e.g. 16KiB, 64KB, 2MiB (default 64KiB)")
        long blockBytes = 64 * 1024;

        @Option(
                names = "--blocks-per-request",
                paramLabel = "N",
                description = "prefix length in blocks (default ${DEFAULT-VALUE})")
        int blocksPerRequest = 32;

        @Option(
                names = "--prefixes",
                paramLabel = "N",
                description = "distinct shared prefixes (default ${DEFAULT-VALUE})")
        int prefixes = 1000;

        @Option(
                names = "--zipf",
                paramLabel = "S",
                description = "Zipf exponent over prefixes; 0 = uniform (default ${DEFAULT-VALUE})")
        double zipf = 1.0;

        @Option(names = "--layers", paramLabel = "N", description = "layers per worker (default ${DEFAULT-VALUE})")
        int layers = 1;

        @Option(
                names = "--rate",
                paramLabel = "R",
                description = {
                    "target operations/s over all workers; 0 = as fast as possible (default 0); paced latencies",
                    "count from the intended start (no coordinated omission)"
                })
        double rate = 0;

        // Two plain flags rather than one negatable option: on by default, --no-verify turns it off.
        @Option(names = "--verify", description = "check every loaded byte (the default)")
        boolean verifyOn;

        @Option(names = "--no-verify", description = "do not check loaded bytes")
        boolean verifyOff;

        @Option(
                names = "--namespace",
                paramLabel = "NS",
                description = "namespace shared by all workers (default ${DEFAULT-VALUE})")
        String namespace = "loadgen";

        @Option(
                names = "--instance-prefix",
                paramLabel = "ID",
                description = "instance id prefix (default loadgen-<pid>)")
        String instancePrefix = "";

        @Option(names = "--seed", paramLabel = "N", description = "random seed (default ${DEFAULT-VALUE})")
        long seed = 42;

        @Option(
                names = "--hash-bytes",
                paramLabel = "N",
                description = "block hash length, 8..64 (default ${DEFAULT-VALUE}, vLLM's sha256)")
        int hashBytes = 32;

        @Option(names = "--json", paramLabel = "FILE", description = "also write the report as JSON")
        String json = "";

        @Option(
                names = "--plot",
                paramLabel = "FILE.svg",
                description = "also write latency percentile and throughput plots as SVG")
        String plot = "";

        @Option(names = "--no-progress", description = "no progress bar on stderr")
        boolean progressOff;

        @Option(
                names = "--admin-url",
                paramLabel = "URL",
                description = {
                    "the server's HTTP base URL, e.g. http://127.0.0.1:9091; e2e uses",
                    "POST /cache/memory/cleanup between Save repetitions"
                })
        String adminUrl = "";

        // No ${DEFAULT-VALUE}: --help must not print a secret taken from the environment.
        @Option(
                names = "--admin-token",
                paramLabel = "TOKEN",
                description = {
                    "the server's pega.admin.token, sent as a bearer token with --admin-url's requests",
                    "(default: $PEGA_ADMIN_TOKEN; the server's HTTP port refuses mutations without it unless it is",
                    "bound to 127.0.0.1)"
                })
        @Nullable
        String adminToken;

        @Option(names = "--e2e-query-blocks", paramLabel = "N", description = "(default ${DEFAULT-VALUE})")
        int e2eQueryBlocks = 32768;

        @Option(names = "--e2e-save-blocks", paramLabel = "N", description = "(default ${DEFAULT-VALUE})")
        int e2eSaveBlocks = 8192;

        @Option(names = "--e2e-reps", paramLabel = "N", description = "(default ${DEFAULT-VALUE})")
        int e2eReps = 10;

        @Option(
                names = "--rpc-timeout",
                paramLabel = "D",
                converter = CommandLines.DurationConverter.class,
                description = "deadline per RPC (default 60s)")
        Duration rpcTimeout = Duration.ofSeconds(60);

        @Option(
                names = "--load-timeout",
                paramLabel = "D",
                converter = CommandLines.DurationConverter.class,
                description = "wait for a load state at most this long (default 30s)")
        Duration loadTimeout = Duration.ofSeconds(30);

        @Option(
                names = {"-h", "--help"},
                usageHelp = true,
                description = "this text")
        boolean help;
    }

    static final class SizeConverter implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            return Units.parseBytes(value);
        }
    }

    static String usage() {
        return new CommandLine(new Cli()).getUsageMessage();
    }

    /**
     * Parses {@code --key value}, {@code --key=value}, {@code --flag} and {@code --no-flag}.
     *
     * @throws IllegalArgumentException for an unknown option, a missing value or a value out of range
     * @throws CommandLines.HelpRequested for {@code --help} or {@code -h}
     */
    static LoadGenOptions parse(String... args) {
        return parse(Map.of(), args);
    }

    /**
     * As {@link #parse(String...)}, with the environment that supplies defaults ({@value #ADMIN_TOKEN_ENV}).
     *
     * @param env the process environment, {@code System.getenv()} in {@link LoadGenerator#main}
     */
    static LoadGenOptions parse(Map<String, String> env, String... args) {
        Cli c = CommandLines.parse(new Cli(), args);
        int colon = c.target.lastIndexOf(':');
        if (colon <= 0 || colon == c.target.length() - 1) {
            throw new IllegalArgumentException("--target must be HOST:PORT, got '" + c.target + "'");
        }
        String host = c.target.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port = (int) in("target port", parsePort(c.target.substring(colon + 1)), 1, 65535);
        String scenario = c.scenario.toLowerCase(Locale.ROOT);
        if (!scenario.equals("mix") && !scenario.equals("e2e")) {
            throw new IllegalArgumentException("--scenario must be mix or e2e, got '" + c.scenario + "'");
        }
        in("block-size", c.blockBytes, 1, 1L << 30);
        if (c.duration.isZero()) {
            throw new IllegalArgumentException("--duration must be > 0");
        }
        if (c.namespace.isBlank()) {
            throw new IllegalArgumentException("--namespace must not be empty");
        }
        return new LoadGenOptions(
                host,
                port,
                scenario,
                (int) in("workers", c.workers, 1, 1024),
                c.duration,
                in("ops", c.ops, 0, Long.MAX_VALUE),
                c.warmup,
                OpMix.parse(c.mix),
                c.blockBytes,
                (int) in("blocks-per-request", c.blocksPerRequest, 1, 1 << 20),
                (int) in("prefixes", c.prefixes, 1, 1 << 26),
                in("zipf", c.zipf, 0, 10),
                (int) in("layers", c.layers, 1, 1024),
                in("rate", c.rate, 0, 1e7),
                !c.verifyOff,
                c.namespace,
                c.instancePrefix.isEmpty()
                        ? "loadgen-" + ProcessHandle.current().pid()
                        : c.instancePrefix,
                c.seed,
                (int) in("hash-bytes", c.hashBytes, 8, 64),
                c.json,
                c.plot,
                !c.progressOff,
                c.adminUrl,
                c.adminToken != null ? c.adminToken : env.getOrDefault(ADMIN_TOKEN_ENV, ""),
                (int) in("e2e-query-blocks", c.e2eQueryBlocks, 1, 1 << 22),
                (int) in("e2e-save-blocks", c.e2eSaveBlocks, 1, 1 << 22),
                (int) in("e2e-reps", c.e2eReps, 1, 100_000),
                c.rpcTimeout,
                c.loadTimeout);
    }

    /** Bytes one worker maps as device memory: every layer holds one request's blocks. */
    long deviceBytesPerWorker() {
        return Math.multiplyExact(Math.multiplyExact(blockBytes, (long) blocksPerRequest), layers);
    }

    private static long parsePort(String text) {
        try {
            return Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--target port must be an integer, got '" + text + "'", e);
        }
    }

    private static long in(String name, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException("--" + name + " must be in " + min + ".." + max + ", got " + v);
        }
        return v;
    }

    private static double in(String name, double v, double min, double max) {
        if (!(v >= min && v <= max)) {
            throw new IllegalArgumentException("--" + name + " must be in " + min + ".." + max + ", got " + v);
        }
        return v;
    }
}
