package io.pegaflow.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What this process holds that a leak would grow: open file descriptors ({@code /proc/self/fd}), live threads (by
 * name, with digits folded so pool threads group) and {@code /dev/shm} objects whose name starts with a prefix. Leak
 * tests take a {@link #snapshot} after a warm-up that creates every lazily started pool, run many more rounds of the
 * same work, then {@link #awaitNoGrowth} over the baseline: a leak of one per round shows as hundreds, while threads
 * that an idle pool retires late stay within the slack.
 */
public final class ProcessResources {
    /** A point-in-time count. {@code threadsByName} names each thread family and how many are alive. */
    public record Snapshot(int fds, int threads, int shmObjects, Map<String, Integer> threadsByName) {
        /** Whether nothing grew by more than {@code slack} over {@code baseline}. */
        public boolean withinSlackOf(Snapshot baseline, int slack) {
            return fds <= baseline.fds + slack
                    && threads <= baseline.threads + slack
                    && shmObjects <= baseline.shmObjects;
        }
    }

    private final String shmPrefix;

    /** @param shmPrefix the {@code /dev/shm} name prefix this test's objects use ("" counts none) */
    public ProcessResources(String shmPrefix) {
        this.shmPrefix = shmPrefix;
    }

    public Snapshot snapshot() {
        Map<String, Integer> byName = new TreeMap<>();
        int threads = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive()) {
                threads++;
                byName.merge(t.getName().replaceAll("\\d+", "#"), 1, Integer::sum);
            }
        }
        return new Snapshot(
                count(Path.of("/proc/self/fd"), ""),
                threads,
                shmPrefix.isEmpty() ? 0 : count(Path.of("/dev/shm"), shmPrefix),
                byName);
    }

    /**
     * Waits up to {@code within} for the counts to come back to {@code baseline} plus {@code slack} (threads and fds;
     * shared-memory objects must be back exactly) and returns the final snapshot; throws with both snapshots when they
     * do not.
     */
    public Snapshot awaitNoGrowth(Snapshot baseline, int slack, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        Snapshot now = snapshot();
        while (!now.withinSlackOf(baseline, slack)) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("resources grew: before " + baseline + ", after " + now);
            }
            System.gc(); // lets channels and buffers that are only unreachable close their descriptors
            sleep(100);
            now = snapshot();
        }
        return now;
    }

    private static int count(Path dir, String prefix) {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path p : entries) {
                if (p.getFileName().toString().startsWith(prefix)) {
                    out.add(p);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.size();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for resources to settle", e);
        }
    }
}
