package io.pegaflow.bench.fleet;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Reads one metaserver's cost from outside: its Prometheus text ({@code /metrics}) for index size, heap and CPU time,
 * and, when the process runs on this machine, {@code jcmd <pid> GC.run} first so that the heap reading is live data
 * rather than garbage, and {@code /proc/<pid>/stat} for CPU time when the exporter has none.
 */
final class MetaserverProbe {

    /** One reading; a field the metaserver did not export is NaN. */
    record Reading(long nanos, double blockOwners, double blockKeys, double heapBytes, double cpuSeconds) {}

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final double CLOCK_TICKS_PER_SECOND = 100;

    private final @Nullable String metricsBase;
    private final long pid;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

    /**
     * @param metricsBase {@code http://host:port} of the metaserver's HTTP listener, or null
     * @param pid the metaserver's process id on this machine, or 0
     */
    MetaserverProbe(@Nullable String metricsBase, long pid) {
        this.metricsBase = metricsBase;
        this.pid = pid;
    }

    /**
     * A reading; with {@code gc} and a known pid, after a full GC, so that heap differences measure what the index
     * retains.
     */
    Reading read(boolean gc) {
        if (gc && pid > 0) {
            fullGc();
        }
        String text = scrape();
        double cpu = sum(text, "process_cpu_time_ns_total", "") / 1e9;
        if (Double.isNaN(cpu)) {
            cpu = procCpuSeconds();
        }
        return new Reading(
                System.nanoTime(),
                sum(text, "pegaflow_metaserver_block_owners", ""),
                sum(text, "pegaflow_metaserver_store_entries", ""),
                sum(text, "jvm_memory_used_bytes", "area=\"heap\""),
                cpu);
    }

    private void fullGc() {
        try {
            Process p = new ProcessBuilder("jcmd", Long.toString(pid), "GC.run")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        } catch (IOException e) {
            System.err.println("warning: jcmd " + pid + " GC.run failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private String scrape() {
        if (metricsBase == null) {
            return "";
        }
        try {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(metricsBase + "/metrics"))
                            .timeout(TIMEOUT)
                            .GET()
                            .build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return r.statusCode() == 200 ? r.body() : "";
        } catch (IOException e) {
            System.err.println("warning: cannot scrape " + metricsBase + "/metrics: " + e.getMessage());
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** Sum of every sample of {@code name} whose labels contain {@code labelFilter}; NaN when there is none. */
    static double sum(String text, String name, String labelFilter) {
        double total = 0;
        boolean found = false;
        for (String line : text.split("\n", -1)) {
            if (line.startsWith("#") || !line.startsWith(name)) {
                continue;
            }
            int nameEnd = name.length();
            if (line.length() <= nameEnd || (line.charAt(nameEnd) != '{' && line.charAt(nameEnd) != ' ')) {
                continue; // a longer metric name sharing the prefix
            }
            if (!labelFilter.isEmpty() && !line.contains(labelFilter)) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            try {
                total += Double.parseDouble(line.substring(space + 1));
                found = true;
            } catch (NumberFormatException ignored) {
                // not a sample line
            }
        }
        return found ? total : Double.NaN;
    }

    private double procCpuSeconds() {
        if (pid <= 0) {
            return Double.NaN;
        }
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            // fields after the command name, which is in parentheses and may contain spaces
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ", -1);
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / CLOCK_TICKS_PER_SECOND;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }
}
