package io.pegaflow.it.net;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Two network namespaces joined by one veth pair: {@code a} holds {@link #ADDRESS_A} on its end, {@code b} holds
 * {@link #ADDRESS_B}, a /24 that exists only inside the two (so concurrent runs, each with its own pair, never clash),
 * and each has its own loopback up. A process in one reaches the other only through the veth, so traffic between
 * them crosses a real network stack: ARP, routing, TCP over a device that is not {@code lo}.
 *
 * <p>Names carry this JVM's pid ({@code pgit-<pid>-<n>-a}, veth {@code pgv<pid>s<n>a}, the availability probe
 * {@code pgit-<pid>-probe}), which is how
 * {@link #removeLeftovers()} tells the pairs of a crashed run (pid gone) from those of a run still going.
 * {@link #close()} deletes both namespaces, and with them the veth, exactly once; a shutdown hook does the same when
 * the JVM is stopped before the test's own cleanup runs.
 */
public final class NamespacePair implements AutoCloseable {
    public static final String ADDRESS_A = "10.213.0.1";
    public static final String ADDRESS_B = "10.213.0.2";
    private static final String PREFIX = "pgit-";
    private static final Pattern OURS = Pattern.compile("^pgit-(\\d+)-(?:\\d+-[ab]|probe)\\b");
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    private final String a;
    private final String b;
    private final String deviceA;
    private final String deviceB;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread hook;

    private NamespacePair(String a, String b, String deviceA, String deviceB) {
        this.a = a;
        this.b = b;
        this.deviceA = deviceA;
        this.deviceB = deviceB;
        this.hook = new Thread(this::delete, "netns-cleanup-" + a);
    }

    /**
     * Why this process cannot make network namespaces, or empty when it can: tried for real (add and delete one),
     * because being root is not enough in a container without {@code CAP_SYS_ADMIN} or without {@code ip}.
     */
    public static Optional<String> unavailable() {
        if (!System.getProperty("os.name", "")
                .toLowerCase(java.util.Locale.ROOT)
                .contains("linux")) {
            return Optional.of("network namespaces need Linux, this is " + System.getProperty("os.name"));
        }
        String probe = PREFIX + ProcessHandle.current().pid() + "-probe";
        CommandLine.Result add = CommandLine.run(List.of("ip", "netns", "add", probe));
        if (add.exitCode() != 0) {
            return Optional.of("`ip netns add` failed (needs root with CAP_SYS_ADMIN and iproute2): "
                    + add.output().strip());
        }
        CommandLine.Result del = CommandLine.run(List.of("ip", "netns", "del", probe));
        if (del.exitCode() != 0) {
            return Optional.of(
                    "`ip netns del " + probe + "` failed: " + del.output().strip());
        }
        return Optional.empty();
    }

    /**
     * Deletes the namespaces of runs whose JVM is gone, after killing what still runs inside them (the servers of
     * such a run, which nothing else would ever stop). Pairs of live JVMs, this one's included, are left alone.
     *
     * @return the namespaces removed
     */
    public static List<String> removeLeftovers() {
        List<String> removed = new ArrayList<>();
        CommandLine.Result list = CommandLine.run(List.of("ip", "netns", "list"));
        if (list.exitCode() != 0) {
            return removed;
        }
        for (String line : list.output().split("\n", -1)) {
            Matcher m = OURS.matcher(line.strip());
            if (!m.find() || ProcessHandle.of(Long.parseLong(m.group(1))).isPresent()) {
                continue;
            }
            String name = line.strip().split("\\s+", -1)[0];
            killProcessesIn(name);
            CommandLine.run(List.of("ip", "netns", "del", name));
            removed.add(name);
        }
        return removed;
    }

    /** Creates the pair; on any failure whatever was made so far is deleted again. */
    public static NamespacePair create() {
        long pid = ProcessHandle.current().pid();
        int n = SEQUENCE.incrementAndGet();
        NamespacePair pair = new NamespacePair(
                PREFIX + pid + "-" + n + "-a",
                PREFIX + pid + "-" + n + "-b",
                "pgv" + pid + "s" + n + "a",
                "pgv" + pid + "s" + n + "b");
        Runtime.getRuntime().addShutdownHook(pair.hook);
        try {
            pair.build();
            return pair;
        } catch (RuntimeException e) {
            pair.close();
            throw e;
        }
    }

    private void build() {
        CommandLine.runOrThrow("ip", "netns", "add", a);
        CommandLine.runOrThrow("ip", "netns", "add", b);
        // Both ends are created inside their namespaces, so no half-made veth is ever left in the root namespace.
        CommandLine.runOrThrow(
                "ip", "link", "add", deviceA, "netns", a, "type", "veth", "peer", "name", deviceB, "netns", b);
        configure(a, deviceA, ADDRESS_A);
        configure(b, deviceB, ADDRESS_B);
    }

    private static void configure(String namespace, String device, String address) {
        CommandLine.runOrThrow("ip", "-n", namespace, "link", "set", "lo", "up");
        CommandLine.runOrThrow("ip", "-n", namespace, "addr", "add", address + "/24", "dev", device);
        CommandLine.runOrThrow("ip", "-n", namespace, "link", "set", device, "up");
    }

    public String namespaceA() {
        return a;
    }

    public String namespaceB() {
        return b;
    }

    public String deviceA() {
        return deviceA;
    }

    public String deviceB() {
        return deviceB;
    }

    /** {@code ip netns exec NAME}: run a command inside the namespace (it execs, so the pid stays the command's). */
    public static List<String> execIn(String namespace) {
        return List.of("ip", "netns", "exec", namespace);
    }

    @Override
    public void close() {
        delete();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is what is running now
        }
    }

    private void delete() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (String ns : List.of(a, b)) {
            killProcessesIn(ns);
            CommandLine.run(List.of("ip", "netns", "del", ns));
        }
    }

    /**
     * A namespace outlives its name while a process is inside it; the tests stop their own children first, so this
     * only finds the children of a run that died.
     */
    private static void killProcessesIn(String namespace) {
        CommandLine.Result pids = CommandLine.run(List.of("ip", "netns", "pids", namespace));
        if (pids.exitCode() != 0) {
            return;
        }
        for (String pid : pids.output().split("\\s+", -1)) {
            if (pid.matches("\\d+")) {
                ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }
}
