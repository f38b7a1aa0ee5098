package io.pegaflow.bench.loadgen;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Command-line options of {@link LoadGenerator}. Parsing is pure (no I/O) so it is unit-tested; every rejected value
 * is named in the message.
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
        int e2eQueryBlocks,
        int e2eSaveBlocks,
        int e2eReps,
        Duration rpcTimeout,
        Duration loadTimeout) {

    static final String USAGE = """
            Usage: java -cp pega-benchmarks/target/benchmarks.jar io.pegaflow.bench.loadgen.LoadGenerator \\
                     --target HOST:PORT [options]

            Simulated vLLM workers on the host backend (device memory in /dev/shm, so run it on the server's
            machine) drive Save, QueryPrefetch and Load over gRPC with shared prefixes drawn from a Zipf law,
            verify loaded bytes, and report throughput, HdrHistogram latency percentiles, hit rate and errors.

              --target HOST:PORT        the server's gRPC address (required)
              --scenario mix|e2e        mix: the workload below (default); e2e: fixed end-to-end figures
                                        (Save and Load of --e2e-save-blocks x --block-size, QueryPrefetch of
                                        --e2e-query-blocks all-hit hashes of 1 KiB blocks), --e2e-reps each
              --workers N               simulated workers, one instance and one thread each (default 4)
              --duration D              how long to run, e.g. 30s, 2m (default 30s)
              --ops N                   stop after N operations in total instead (default: by duration)
              --warmup D                run this long first without recording (default 0s)
              --mix SPEC                op=weight list of save, query, load, request (default request=1)
                                          request = query, load the hits, save the missing suffix
              --block-size SIZE         bytes per block and layer, e.g. 16KiB, 64KiB, 2MiB (default 64KiB)
              --blocks-per-request N    prefix length in blocks (default 32)
              --prefixes N              distinct shared prefixes (default 1000)
              --zipf S                  Zipf exponent over prefixes; 0 = uniform (default 1.0)
              --layers N                layers per worker (default 1)
              --rate R                  target operations/s over all workers; 0 = as fast as possible (default 0);
                                        paced latencies count from the intended start (no coordinated omission)
              --verify / --no-verify    check every loaded byte (default on)
              --namespace NS            namespace shared by all workers (default loadgen)
              --seed N                  random seed (default 42)
              --hash-bytes N            block hash length, 8..64 (default 32, vLLM's sha256)
              --json FILE               also write the report as JSON
              --plot FILE.svg           also write latency percentile and throughput plots as SVG
              --no-progress             no progress bar
              --admin-url URL           the server's HTTP base URL, e.g. http://127.0.0.1:9090; e2e uses
                                        POST /cache/memory/cleanup between Save repetitions
              --e2e-query-blocks N      (default 32768)   --e2e-save-blocks N (default 8192)
              --e2e-reps N              (default 10)
              --rpc-timeout D           deadline per RPC (default 60s)
              --load-timeout D          wait for a load state at most this long (default 30s)
            """;

    private static final Map<String, String> DEFAULTS = defaults();

    private static Map<String, String> defaults() {
        Map<String, String> d = new LinkedHashMap<>();
        d.put("scenario", "mix");
        d.put("workers", "4");
        d.put("duration", "30s");
        d.put("ops", "0");
        d.put("warmup", "0s");
        d.put("mix", "request=1");
        d.put("block-size", "64KiB");
        d.put("blocks-per-request", "32");
        d.put("prefixes", "1000");
        d.put("zipf", "1.0");
        d.put("layers", "1");
        d.put("rate", "0");
        d.put("verify", "true");
        d.put("namespace", "loadgen");
        d.put("instance-prefix", "");
        d.put("seed", "42");
        d.put("hash-bytes", "32");
        d.put("json", "");
        d.put("plot", "");
        d.put("progress", "true");
        d.put("admin-url", "");
        d.put("e2e-query-blocks", "32768");
        d.put("e2e-save-blocks", "8192");
        d.put("e2e-reps", "10");
        d.put("rpc-timeout", "60s");
        d.put("load-timeout", "30s");
        return d;
    }

    /** Thrown for {@code --help}: the caller prints {@link #USAGE} and exits 0. */
    static final class HelpRequested extends RuntimeException {
        private static final long serialVersionUID = 1L;

        HelpRequested() {
            super("help", null, false, false);
        }
    }

    /**
     * Parses {@code --key value}, {@code --key=value}, {@code --flag} and {@code --no-flag}.
     *
     * @throws IllegalArgumentException for an unknown option, a missing value or a value out of range
     * @throws HelpRequested for {@code --help} or {@code -h}
     */
    static LoadGenOptions parse(String... args) {
        Map<String, String> values = new HashMap<>(DEFAULTS);
        String target = null;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--help") || arg.equals("-h")) {
                throw new HelpRequested();
            }
            if (!arg.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + arg + "' (options start with --)");
            }
            String key = arg.substring(2);
            String value = null;
            int eq = key.indexOf('=');
            if (eq >= 0) {
                value = key.substring(eq + 1);
                key = key.substring(0, eq);
            }
            if (value == null && (key.equals("verify") || key.equals("progress"))) {
                value = "true";
            } else if (value == null && (key.equals("no-verify") || key.equals("no-progress"))) {
                key = key.substring(3);
                value = "false";
            }
            if (!key.equals("target") && !DEFAULTS.containsKey(key)) {
                throw new IllegalArgumentException("unknown option --" + key + " (see --help)");
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("option --" + key + " needs a value");
                }
                value = args[++i];
            }
            if (key.equals("target")) {
                target = value;
            } else {
                values.put(key, value);
            }
        }
        if (target == null) {
            throw new IllegalArgumentException("--target HOST:PORT is required");
        }
        int colon = target.lastIndexOf(':');
        if (colon <= 0 || colon == target.length() - 1) {
            throw new IllegalArgumentException("--target must be HOST:PORT, got '" + target + "'");
        }
        String host = target.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port = intIn("target port", target.substring(colon + 1), 1, 65535);

        String scenario = values.get("scenario").toLowerCase(Locale.ROOT);
        if (!scenario.equals("mix") && !scenario.equals("e2e")) {
            throw new IllegalArgumentException("--scenario must be mix or e2e, got '" + scenario + "'");
        }
        long blockBytes = Units.parseBytes(values.get("block-size"));
        if (blockBytes < 1 || blockBytes > (1L << 30)) {
            throw new IllegalArgumentException("--block-size must be 1 B..1 GiB, got " + blockBytes);
        }
        Duration duration = Units.parseDuration(values.get("duration"));
        if (duration.isZero()) {
            throw new IllegalArgumentException("--duration must be > 0");
        }
        double zipf = doubleIn("zipf", values.get("zipf"), 0, 10);
        double rate = doubleIn("rate", values.get("rate"), 0, 1e7);
        String instancePrefix = values.get("instance-prefix");
        if (instancePrefix.isEmpty()) {
            instancePrefix = "loadgen-" + ProcessHandle.current().pid();
        }
        return new LoadGenOptions(
                host,
                port,
                scenario,
                intIn("workers", values.get("workers"), 1, 1024),
                duration,
                longIn("ops", values.get("ops"), 0, Long.MAX_VALUE),
                Units.parseDuration(values.get("warmup")),
                OpMix.parse(values.get("mix")),
                blockBytes,
                intIn("blocks-per-request", values.get("blocks-per-request"), 1, 1 << 20),
                intIn("prefixes", values.get("prefixes"), 1, 1 << 26),
                zipf,
                intIn("layers", values.get("layers"), 1, 1024),
                rate,
                bool("verify", values.get("verify")),
                nonEmpty("namespace", values.get("namespace")),
                instancePrefix,
                longIn("seed", values.get("seed"), Long.MIN_VALUE, Long.MAX_VALUE),
                intIn("hash-bytes", values.get("hash-bytes"), 8, 64),
                values.get("json"),
                values.get("plot"),
                bool("progress", values.get("progress")),
                values.get("admin-url"),
                intIn("e2e-query-blocks", values.get("e2e-query-blocks"), 1, 1 << 22),
                intIn("e2e-save-blocks", values.get("e2e-save-blocks"), 1, 1 << 22),
                intIn("e2e-reps", values.get("e2e-reps"), 1, 100_000),
                Units.parseDuration(values.get("rpc-timeout")),
                Units.parseDuration(values.get("load-timeout")));
    }

    /** Bytes one worker maps as device memory: every layer holds one request's blocks. */
    long deviceBytesPerWorker() {
        return Math.multiplyExact(Math.multiplyExact(blockBytes, (long) blocksPerRequest), layers);
    }

    private static int intIn(String name, String text, int min, int max) {
        return (int) longIn(name, text, min, max);
    }

    private static long longIn(String name, String text, long min, long max) {
        long v;
        try {
            v = Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be an integer, got '" + text + "'");
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException("--" + name + " must be in " + min + ".." + max + ", got " + v);
        }
        return v;
    }

    private static double doubleIn(String name, String text, double min, double max) {
        double v;
        try {
            v = Double.parseDouble(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be a number, got '" + text + "'");
        }
        if (!(v >= min && v <= max)) {
            throw new IllegalArgumentException("--" + name + " must be in " + min + ".." + max + ", got " + v);
        }
        return v;
    }

    private static boolean bool(String name, String text) {
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "true", "yes", "on", "1" -> true;
            case "false", "no", "off", "0" -> false;
            default -> throw new IllegalArgumentException("--" + name + " must be true or false, got '" + text + "'");
        };
    }

    private static String nonEmpty(String name, String text) {
        if (text.isBlank()) {
            throw new IllegalArgumentException("--" + name + " must not be empty");
        }
        return text;
    }
}
